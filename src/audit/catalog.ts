import type { z } from 'zod';
import { realmFileComponent } from '../api/catalog.js';
import { UsageError } from '../errors.js';
import * as m from './models.js';

/**
 * Every route of the audit service (spec/audit-api.md section 4), as data. The
 * command, the fake audit service and the tests read this one list.
 */
export type AuditRouteId =
  | 'info'
  | 'queries-params'
  | 'tags-list'
  | 'queries-list'
  | 'reports-list'
  | 'alerts-list'
  | 'alerts'
  | 'objects'
  | 'query'
  | 'report'
  | 'report-object';

/** Variables of path and file templates. */
export type AuditVar = 'from' | 'to' | 'id' | 'objectId' | 'type';

export interface AuditRouteDef {
  readonly id: AuditRouteId;
  readonly method: 'GET' | 'POST';
  /** Relative to the audit URL; `{from}` etc. are filled by `planAuditRoute`. */
  readonly path: string;
  /** `none`: GET /info (sent without the token); `token`: header `x-access-token`. */
  readonly auth: 'none' | 'token';
  /** Output file template, with the same variables made file-safe. */
  readonly file: string;
  /**
   * `array`: a JSON array of `item`; `map`: a JSON object whose values are
   * `item`; `object`: one `item`; `xlsx`: a spreadsheet, not JSON.
   */
  readonly shape: 'array' | 'map' | 'object' | 'xlsx';
  readonly item?: z.ZodType;
  /** Model of the POST body. */
  readonly request?: z.ZodType;
  /** What the route gives, for help and docs. */
  readonly summary: string;
}

export const AUDIT_ROUTES: readonly AuditRouteDef[] = [
  {
    id: 'info',
    method: 'GET',
    path: '/info',
    auth: 'none',
    file: 'info.json',
    shape: 'object',
    item: m.AuditInfo,
    summary: 'service name and version',
  },
  {
    id: 'queries-params',
    method: 'GET',
    path: '/queries/params',
    auth: 'token',
    file: 'queries-params.json',
    shape: 'array',
    item: m.ParamDesc,
    summary: 'parameter descriptions',
  },
  {
    id: 'tags-list',
    method: 'GET',
    path: '/tags/list',
    auth: 'token',
    file: 'tags-list.json',
    shape: 'array',
    item: m.Tag,
    summary: 'tags',
  },
  {
    id: 'queries-list',
    method: 'GET',
    path: '/queries/list',
    auth: 'token',
    file: 'queries-list.json',
    shape: 'array',
    item: m.QueryDesc,
    summary: 'query descriptions',
  },
  {
    id: 'reports-list',
    method: 'GET',
    path: '/reports/list',
    auth: 'token',
    file: 'reports-list.json',
    shape: 'array',
    item: m.ReportDesc,
    summary: 'report descriptions',
  },
  {
    id: 'alerts-list',
    method: 'GET',
    path: '/alerts/list',
    auth: 'token',
    file: 'alerts-list.json',
    shape: 'map',
    item: m.AlertType,
    summary: 'alert type map',
  },
  {
    id: 'alerts',
    method: 'GET',
    path: '/alerts/{from}/{to}',
    auth: 'token',
    file: 'alerts-{from}-{to}.json',
    shape: 'array',
    item: m.AlertRecord,
    summary: 'alerts triggered in the period',
  },
  {
    id: 'objects',
    method: 'POST',
    path: '/objects/{type}/{to}',
    auth: 'token',
    file: 'objects-{type}-{to}.json',
    shape: 'array',
    item: m.LookedUpObject,
    request: m.ObjectIds,
    summary: 'objects of a type as they were at the end date (--objects)',
  },
  {
    id: 'query',
    method: 'POST',
    path: '/queries/{id}/{to}',
    auth: 'token',
    file: 'queries-{id}-{to}.json',
    shape: 'array',
    item: m.QueryRow,
    request: m.QueryBody,
    summary: 'rows of a named query',
  },
  {
    id: 'report',
    method: 'GET',
    path: '/reports/{id}/{from}/{to}',
    auth: 'token',
    file: 'reports-{id}-{from}-{to}.xlsx',
    shape: 'xlsx',
    summary: 'report spreadsheet',
  },
  {
    id: 'report-object',
    method: 'GET',
    path: '/reports/{id}/{from}/{to}/{objectId}',
    auth: 'token',
    file: 'reports-{id}-{from}-{to}-{objectId}.xlsx',
    shape: 'xlsx',
    summary: 'report spreadsheet for one object',
  },
];

const VAR = /\{(\w+)\}/g;

function vars(template: string): string[] {
  return [...template.matchAll(VAR)].map((x) => x[1]!);
}

function checkCatalog(routes: readonly AuditRouteDef[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    for (const key of [`id:${r.id}`, `route:${r.method} ${r.path}`, `file:${r.file}`]) {
      if (seen.has(key)) throw new Error(`audit route catalog: duplicate ${key}`);
      seen.add(key);
    }
    const inPath = vars(r.path).sort().join(',');
    if (inPath !== vars(r.file).sort().join(',')) {
      throw new Error(`audit route catalog: ${r.id} has different variables in its path and file templates`);
    }
    if ((r.method === 'POST') !== (r.request !== undefined))
      throw new Error(`audit route catalog: ${r.id}: a POST route needs a request model`);
    if ((r.shape === 'xlsx') === (r.item !== undefined))
      throw new Error(`audit route catalog: ${r.id}: JSON routes need an item model`);
  }
}
checkCatalog(AUDIT_ROUTES);

export function auditRoute(id: AuditRouteId): AuditRouteDef {
  const r = AUDIT_ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`unknown audit route id ${id}`);
  return r;
}

/** One concrete request. */
export interface PlannedAuditRoute {
  readonly def: AuditRouteDef;
  /** `GET /alerts/2026-11-01/2026-11-21`: what the manifest and messages show. */
  readonly label: string;
  /** Path relative to the audit URL, variables URL-encoded. */
  readonly urlPath: string;
  /** Output file name, variables made file-safe like realm ids. */
  readonly file: string;
}

export function planAuditRoute(def: AuditRouteDef, values: Partial<Record<AuditVar, string>> = {}): PlannedAuditRoute {
  const fill = (template: string, encode: (v: string) => string) =>
    template.replace(VAR, (_, name: string) => {
      const v = values[name as AuditVar];
      if (v === undefined) throw new Error(`audit route ${def.id} needs {${name}}`);
      return encode(v);
    });
  const segment = (v: string) => {
    // URL parsing removes a "." or ".." segment even when percent-encoded, so such an id cannot be sent.
    if (v === '.' || v === '..')
      throw new UsageError(`"${v}" cannot be sent as a path segment of ${def.method} ${def.path}`);
    return encodeURIComponent(v);
  };
  const urlPath = fill(def.path, segment);
  return { def, label: `${def.method} ${urlPath}`, urlPath, file: fill(def.file, realmFileComponent) };
}
