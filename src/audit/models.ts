/**
 * zod models of the audit service resources (spec/audit-api.md section 2).
 *
 * Plain `z.object`s: unknown keys are tolerated. Fields the spec leaves "not
 * shown" (parameter `type` values, `charts` items, the `info` of an alert, the
 * fields of looked-up objects) are `unknown` or free strings here.
 */
import { z } from 'zod';

/** A value of any JSON type (a parameter default, a cell of a query row). */
const json = () => z.unknown();

export const AuditInfo = z.object({
  version: z.string(),
  name: z.string(),
});

/** GET /queries/params: the parameters queries may take. */
export const ParamDesc = z.object({
  id: z.string(),
  default: json().optional(),
  desc: z.string().optional(),
  /** Allowed values "not shown" in the spec; see `src/audit/params.ts`. */
  type: z.string().optional(),
});
export type ParamDesc = z.infer<typeof ParamDesc>;

export const Tag = z.object({
  id: z.string(),
  name: z.string(),
  desc: z.string().optional(),
  cat: z.string().optional(),
  pri: z.number().optional(),
});

/** One parameter of a query description. */
export const QueryParam = z.object({
  id: z.string(),
  name: z.string().optional(),
  default: json().optional(),
  desc: z.string().optional(),
  type: z.string().optional(),
});
export type QueryParam = z.infer<typeof QueryParam>;

/** GET /queries/list. */
export const QueryDesc = z.object({
  id: z.string(),
  name: z.string(),
  desc: z.string().optional(),
  tags: z.array(z.string()).optional(),
  returnTypes: z.array(z.string()),
  returnNames: z.array(z.string()),
  params: z.array(QueryParam).default([]),
  /** Items "not shown" in the spec. */
  charts: z.array(json()).optional(),
});
export type QueryDesc = z.infer<typeof QueryDesc>;

/** GET /reports/list. */
export const ReportDesc = z.object({
  id: z.string(),
  name: z.string(),
  desc: z.string().optional(),
  objType: z.string().optional(),
  /** Set (non-empty) when the report is built for one object: its download needs an object id. */
  objParam: z.string().optional(),
  queryIDs: z
    .object({
      query_id: z.array(z.string()).optional(),
      queryParams: z.array(z.record(z.string(), json())).optional(),
    })
    .optional(),
});
export type ReportDesc = z.infer<typeof ReportDesc>;

const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;

/** A value of the map returned by GET /alerts/list. */
export const AlertType = z.object({
  name: z.string(),
  severity: Severity,
  sType: z.string().optional(),
  sField: z.string().optional(),
});

/** GET /alerts/list: alert type id → alert type. */
export const AlertTypeMap = z.record(z.string(), AlertType);
export type AlertTypeMap = z.infer<typeof AlertTypeMap>;

/** GET /alerts/{StartDate}/{EndDate}. */
export const AlertRecord = z.object({
  date: z.string(),
  timestamp: z.number(),
  type: z.string(),
  /** SpecificAlertInfo: "not shown" in the spec. */
  info: json().optional(),
});
export type AlertRecord = z.infer<typeof AlertRecord>;

/** POST /queries/{QueryID}/{EndDate}: an array of rows, each an array of values. */
export const QueryRow = z.array(json());

/** POST /objects/{Type}/{EndDate}: the fields of the objects are "not shown". */
export const LookedUpObject = z.record(z.string(), json());

/** The body of POST /queries/{QueryID}/{EndDate}: parameter id → value. */
export const QueryBody = z.record(z.string(), json());

/** The body of POST /objects/{Type}/{EndDate}: ids to retrieve, `[]` for all. */
export const ObjectIds = z.array(z.string());
