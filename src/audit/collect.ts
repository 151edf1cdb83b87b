import { format } from 'date-fns/format';
import type { ZodType } from 'zod';
import { FailedError, TokenRejectedError, UsageError } from '../errors.js';
import type { HttpClient } from '../http/client.js';
import type { Reporter } from '../progress/reporter.js';
import { MANIFEST_OF } from '../manifests.js';
import { TOOL } from '../version.js';
import { summariseAlerts, type AlertSummary } from './alerts.js';
import { auditRoute, planAuditRoute, type PlannedAuditRoute } from './catalog.js';
import {
  CancelledError,
  fetchAudit,
  type AuditFetcherDeps,
  type AuditResponse,
  type AuditRouteRecord,
} from './fetch.js';
import * as m from './models.js';
import { buildQueryBody, checkParamNames } from './params.js';
import { queryFileText, rowsToRecords } from './records.js';
import type { AuditSettings } from './settings.js';
import { sha256Hex } from '../util/safe-read.js';
import { settleBounded } from '../collect/runner.js';

export const AUDIT_MANIFEST = MANIFEST_OF.audit;

interface AuditQueryEntry {
  id: string;
  file: string;
  /** The body sent: parameter id → value. */
  params: Record<string, unknown>;
  /** Parameter id → `default`, `--param`, `--from` or `--to`. */
  paramSources: Record<string, string>;
  rows: number;
}

interface AuditReportEntry {
  id: string;
  objectId: string | null;
  file: string;
  bytes: number;
}

/** One `--objects` lookup: what was asked for and what was written. */
interface AuditObjectsEntry {
  type: string;
  /** The ids sent, in order; empty: all objects of the type (the body was `[]`). */
  ids: string[];
  file: string;
  status: number;
  /** Size and hash of `file`, the response body byte for byte. */
  bytes: number;
  sha256: string;
  /** Objects in the answer. */
  count: number;
}

/** `_audit-manifest.json` (README.md, "The audit service"). */
export interface AuditManifest {
  kind: 'audit';
  tool: { name: string; version: string };
  auditUrl: string;
  service: { name: string; version: string };
  time: string;
  date: string;
  from: string;
  to: string;
  alerts: AlertSummary;
  queries: AuditQueryEntry[];
  reports: AuditReportEntry[];
  objects: AuditObjectsEntry[];
  validation: { issues: number; samples: ValidationIssue[] };
  routes: AuditRouteRecord[];
}

/** A collection in memory: the manifest and every file's bytes, in the order written. */
export interface AuditCollection {
  manifest: AuditManifest;
  files: Map<string, Buffer>;
}

export interface AuditDeps {
  readonly http: HttpClient;
  readonly reporter: Reporter;
  /** Cancels requests in flight when one fails or a token is refused. */
  readonly abort: AbortController;
  readonly now?: () => Date;
  /** Told when a request ends, read or failed. */
  readonly onRequestEnded?: (state: 'read' | 'failed') => void;
}

const SAMPLE_ISSUES = 20;

const LIST_ROUTES = ['queries-params', 'tags-list', 'queries-list', 'reports-list', 'alerts-list'] as const;

/** The error to report when several requests failed: a refused token first, never a cancellation. */
function pickError(errors: unknown[]): unknown {
  return (
    errors.find((e) => e instanceof TokenRejectedError) ??
    errors.find((e) => !(e instanceof CancelledError)) ??
    new FailedError('the audit collection was cancelled; nothing was published')
  );
}

function listedIds(body: unknown): string[] {
  if (!Array.isArray(body)) return [];
  return body.flatMap((x) =>
    x && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string' ? [(x as { id: string }).id] : [],
  );
}

function notListed(what: 'query' | 'report', id: string, listed: readonly string[], route: string): UsageError {
  const ids = listed.length > 0 ? listed.join(', ') : 'none';
  return new UsageError(
    `${what} "${id}" is not listed by the audit service (${route}); the ${what === 'query' ? 'queries' : 'reports'} it lists are: ${ids}`,
  );
}

interface QueryPlan {
  readonly desc: m.QueryDesc;
  readonly planned: PlannedAuditRoute;
  readonly body: Record<string, unknown>;
  readonly sources: Record<string, string>;
}

/** Runs tasks with bounded concurrency; the first failure cancels the others (through `abort`), then one error is thrown. */
type RunAll = <T>(tasks: Array<() => Promise<T>>) => Promise<T[]>;

/**
 * The audit collection: GET /info without the token, then the five
 * capability lists, then — once --query, --param and --report are checked
 * against those lists — the alerts of the period, the queries and the
 * reports, all with bounded concurrency. Any failure stops the run.
 */
export async function collectAudit(settings: AuditSettings, deps: AuditDeps): Promise<AuditCollection> {
  const started = (deps.now ?? (() => new Date()))();
  const all: RunAll = (tasks) =>
    settleBounded(
      tasks,
      settings.concurrency,
      (task) => task(),
      (err) => deps.abort.abort(err),
      pickError,
    );
  const fetcher: AuditFetcherDeps = {
    http: deps.http,
    reporter: deps.reporter,
    auditUrl: settings.auditUrl,
    token: settings.token,
    ...(deps.onRequestEnded ? { onEnded: deps.onRequestEnded } : {}),
  };
  const issues: ValidationIssue[] = [];

  // GET /info, without the token (spec section 5): its version goes into the manifest.
  const [info] = await all([() => fetchAudit(fetcher, planAuditRoute(auditRoute('info')))]);
  const service = serviceOf(info!);
  const lists = await all(LIST_ROUTES.map((id) => () => fetchAudit(fetcher, planAuditRoute(auditRoute(id)))));
  const capabilities = readCapabilities(lists, issues);
  const plans = planRequests(settings, capabilities, issues);
  const data = await fetchData(all, fetcher, plans);
  const alerts = validateItems(data.alerts.planned.label, m.AlertRecord, data.alerts.json);
  issues.push(...alerts.issues);

  const out = new WrittenFiles();
  for (const res of [info!, ...lists, data.alerts]) out.put(res);
  const queries = plans.queries.map((q, i) => writeQuery(out, settings, q, data.queries[i]!));
  const reports: AuditReportEntry[] = plans.reports.map((r, i) => {
    const res = data.reports[i]!;
    out.put(res);
    return { id: r.request.id, objectId: r.request.objectId ?? null, file: res.record.file, bytes: res.record.bytes };
  });
  const objects = plans.objects.map((o, i) => {
    const res = data.objects[i]!;
    // Each object is a free-form record (the spec does not show its fields); a non-object element is counted.
    issues.push(...validateItems(res.planned.label, m.LookedUpObject, res.json).issues);
    out.put(res);
    const { file, status, bytes, sha256 } = res.record;
    const count = (res.json as unknown[]).length;
    return { type: o.request.type, ids: [...o.request.ids], file, status, bytes, sha256, count };
  });

  const manifest: AuditManifest = {
    kind: 'audit',
    tool: { name: TOOL.name, version: TOOL.version },
    auditUrl: settings.auditUrl,
    service,
    time: started.toISOString(),
    date: format(started, 'yyyy-MM-dd'),
    from: settings.from,
    to: settings.to,
    alerts: summariseAlerts(
      alerts.valid.map((x) => x.value),
      capabilities.alertTypes,
    ),
    queries,
    reports,
    objects,
    validation: { issues: issues.length, samples: issues.slice(0, SAMPLE_ISSUES) },
    routes: out.routes,
  };
  return { manifest, files: out.files };
}

/** The service's name and version, from GET /info's answer, which must be the documented Info object. */
function serviceOf(info: AuditResponse): AuditManifest['service'] {
  const parsed = m.AuditInfo.safeParse(info.json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new FailedError(
      `GET /info did not answer with the documented Info object (${i?.path.join('.') || 'body'}: ${i?.message ?? 'invalid'}); ` +
        'check that --audit-url points at the audit service. Nothing was published.',
    );
  }
  return { name: parsed.data.name, version: parsed.data.version };
}

/** What the service offers: the valid entries of each list (in LIST_ROUTES order); the others are added to `issues`. */
function readCapabilities(lists: readonly AuditResponse[], issues: ValidationIssue[]) {
  const byId = new Map(LIST_ROUTES.map((id, i) => [id, lists[i]!]));
  const validated = <T>(id: (typeof LIST_ROUTES)[number], model: ZodType<T>) => {
    const res = byId.get(id)!;
    const v = validateItems(res.planned.label, model, res.json);
    issues.push(...v.issues);
    return v.valid;
  };
  const params = validated('queries-params', m.ParamDesc).map((x) => x.value);
  validated('tags-list', m.Tag);
  const queries = validated('queries-list', m.QueryDesc).map((x) => x.value);
  const reports = validated('reports-list', m.ReportDesc).map((x) => x.value);
  const alertTypes = Object.fromEntries(validated('alerts-list', m.AlertType).map((x) => [String(x.index), x.value]));
  return {
    params,
    queries,
    reports,
    alertTypes,
    // The lists' own answers, to check a requested id against what they list.
    queriesList: byId.get('queries-list')!,
    reportsList: byId.get('reports-list')!,
  };
}

/** The data requests: --query, --param and --report checked against what the service lists, and no two writing one file. */
function planRequests(
  settings: AuditSettings,
  capabilities: ReturnType<typeof readCapabilities>,
  issues: readonly ValidationIssue[],
) {
  const queries = planQueries(settings, capabilities.queriesList, capabilities.queries, capabilities.params, issues);
  const reports = planReports(settings, capabilities.reportsList, capabilities.reports);
  const objects = settings.objects.map((request) => ({
    request,
    planned: planAuditRoute(auditRoute('objects'), { type: request.type, to: settings.to }),
  }));
  checkDistinctFiles([
    ...queries.map((q) => q.planned.file),
    ...reports.map((r) => r.planned.file),
    ...objects.map((o) => o.planned.file),
  ]);
  const alerts = planAuditRoute(auditRoute('alerts'), { from: settings.from, to: settings.to });
  return { alerts, queries, reports, objects };
}

/** The alerts of the period, the queries, the reports and the object lookups, fetched together. */
async function fetchData(all: RunAll, fetcher: AuditFetcherDeps, plans: ReturnType<typeof planRequests>) {
  const data = await all<AuditResponse>([
    () => fetchAudit(fetcher, plans.alerts),
    ...plans.queries.map((q) => () => fetchAudit(fetcher, q.planned, q.body)),
    ...plans.reports.map((r) => () => fetchAudit(fetcher, r.planned)),
    // The spec's body: the ids to retrieve, `[]` for all objects of the type.
    ...plans.objects.map((o) => () => fetchAudit(fetcher, o.planned, [...o.request.ids])),
  ]);
  const reportsAt = 1 + plans.queries.length;
  const objectsAt = reportsAt + plans.reports.length;
  return {
    alerts: data[0]!,
    queries: data.slice(1, reportsAt),
    reports: data.slice(reportsAt, objectsAt),
    objects: data.slice(objectsAt),
  };
}

/** The collection's files and their entries in the manifest's `routes`, in the order written. */
class WrittenFiles {
  readonly files = new Map<string, Buffer>();
  readonly routes: AuditRouteRecord[] = [];

  /** A response body kept byte for byte. */
  put(res: AuditResponse): void {
    this.files.set(res.record.file, res.fetched.body);
    this.routes.push(res.record);
  }

  /** A file made from a response: its own size and hash, and the response's beside them. */
  putMade(res: AuditResponse, bytes: Buffer): void {
    this.files.set(res.record.file, bytes);
    this.routes.push({
      ...res.record,
      bytes: bytes.length,
      sha256: sha256Hex(bytes),
      responseBytes: res.record.bytes,
      responseSha256: res.record.sha256,
    });
  }
}

/** A query's file: the request and the answer as received, with the rows as records (records.ts). */
function writeQuery(out: WrittenFiles, settings: AuditSettings, q: QueryPlan, res: AuditResponse): AuditQueryEntry {
  const rows = queryRows(res);
  const text = queryFileText(
    {
      query: q.desc.id,
      name: q.desc.name,
      endDate: settings.to,
      params: q.body,
      returnNames: q.desc.returnNames,
      returnTypes: q.desc.returnTypes,
    },
    res.fetched.body.toString('utf8'),
    rowsToRecords(q.desc.returnNames, rows),
  );
  out.putMade(res, Buffer.from(text, 'utf8'));
  return { id: q.desc.id, file: res.record.file, params: q.body, paramSources: q.sources, rows: rows.length };
}

function planQueries(
  settings: AuditSettings,
  listRes: AuditResponse,
  described: readonly m.QueryDesc[],
  params: readonly m.ParamDesc[],
  issues: readonly ValidationIssue[],
): QueryPlan[] {
  const listed = listedIds(listRes.json);
  const selected = settings.queries.map((id) => {
    if (!listed.includes(id)) throw notListed('query', id, listed, listRes.planned.label);
    const desc = described.find((q) => q.id === id);
    if (!desc) {
      const issue = issues.find(
        (i) =>
          i.route === listRes.planned.label &&
          typeof i.index === 'number' &&
          listedIds([(listRes.json as unknown[])[i.index]])[0] === id,
      );
      const why = issue ? `${issue.path}: ${issue.message}` : 'invalid';
      throw new FailedError(
        `${listRes.planned.label}: the description of query "${id}" does not have the documented shape (${why}), so it cannot be run. Nothing was published.`,
      );
    }
    return desc;
  });
  checkParamNames(selected, settings.params);
  const period = { from: settings.from, to: settings.to };
  return selected.map((desc) => {
    const { body, sources } = buildQueryBody(desc, params, settings.params, period);
    return { desc, planned: planAuditRoute(auditRoute('query'), { id: desc.id, to: settings.to }), body, sources };
  });
}

function planReports(settings: AuditSettings, listRes: AuditResponse, described: readonly m.ReportDesc[]) {
  const listed = listedIds(listRes.json);
  return settings.reports.map((request) => {
    if (!listed.includes(request.id)) throw notListed('report', request.id, listed, listRes.planned.label);
    const desc = described.find((r) => r.id === request.id);
    const objParam = desc?.objParam ?? '';
    if (objParam !== '' && request.objectId === undefined) {
      const type = desc?.objType ? ` (a ${desc.objType})` : '';
      throw new UsageError(
        `report "${request.id}" is built for one object: give its ${objParam}${type} as --report ${request.id}:<${objParam}>`,
      );
    }
    if (objParam === '' && request.objectId !== undefined && desc) {
      throw new UsageError(`report "${request.id}" takes no object parameter; give it as --report ${request.id}`);
    }
    const values = { id: request.id, from: settings.from, to: settings.to };
    return {
      request,
      planned:
        request.objectId === undefined
          ? planAuditRoute(auditRoute('report'), values)
          : planAuditRoute(auditRoute('report-object'), { ...values, objectId: request.objectId }),
    };
  });
}

function checkDistinctFiles(files: readonly string[]): void {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f))
      throw new UsageError(`two of the --query/--report/--objects requests would both write ${f}; give each only once`);
    seen.add(f);
  }
}

/** A query answer must be an array of rows, each an array of values (spec section 2). */
function queryRows(res: AuditResponse): unknown[][] {
  const rows = res.json as unknown[];
  const bad = rows.findIndex((r) => !Array.isArray(r));
  if (bad >= 0) {
    throw new FailedError(
      `${res.planned.label}: row ${bad} of the answer is not an array of values, as a query result must be. Nothing was published.`,
    );
  }
  return rows as unknown[][];
}

/** A record that does not have its documented shape: where (route, index, path, message), never the value. */
interface ValidationIssue {
  route: string;
  /** Array index, or the key of a map entry. */
  index: number | string;
  path: string;
  message: string;
}

/** Validates every element of an array, or every value of a map, with `model`. Unknown fields are tolerated. */
function validateItems<T>(route: string, model: ZodType<T>, body: unknown) {
  const entries: Array<[number | string, unknown]> = Array.isArray(body)
    ? body.map((v, i): [number, unknown] => [i, v])
    : Object.entries(body as Record<string, unknown>);
  const valid: Array<{ index: number | string; value: T }> = [];
  const issues: ValidationIssue[] = [];
  for (const [index, value] of entries) {
    const r = model.safeParse(value);
    if (r.success) valid.push({ index, value: r.data });
    else
      for (const i of r.error.issues)
        issues.push({ route, index, path: i.path.map(String).join('.'), message: i.message });
  }
  return { valid, issues };
}
