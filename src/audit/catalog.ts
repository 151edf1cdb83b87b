import type { z } from 'zod';
import { realmFileComponent } from '../api/catalog.js';
import { UsageError } from '../errors.js';
import * as m from './models.js';

/** Variables of path and file templates. */
export type AuditVar = 'from' | 'to' | 'id' | 'objectId' | 'type';

export interface AuditRouteDef<I extends string = string> {
  readonly id: I;
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
}

/**
 * A route of the catalog: its file is its path with `/` as `-` (`/alerts/{from}/{to}` → `alerts-{from}-{to}.json`),
 * and every route but GET /info sends the token (spec section 5).
 */
function route<I extends string>(
  id: I,
  method: AuditRouteDef['method'],
  path: string,
  shape: AuditRouteDef['shape'],
  models: Pick<AuditRouteDef, 'item' | 'request'> = {},
): AuditRouteDef<I> {
  const file = `${path.slice(1).replaceAll('/', '-')}.${shape === 'xlsx' ? 'xlsx' : 'json'}`;
  return { id, method, path, auth: id === 'info' ? 'none' : 'token', file, shape, ...models };
}

/**
 * Every route of the audit service (spec/audit-api.md section 4), as data. The
 * command, the fake audit service and the tests read this one list.
 */
export const AUDIT_ROUTES = [
  route('info', 'GET', '/info', 'object', { item: m.AuditInfo }),
  route('queries-params', 'GET', '/queries/params', 'array', { item: m.ParamDesc }),
  route('tags-list', 'GET', '/tags/list', 'array', { item: m.Tag }),
  route('queries-list', 'GET', '/queries/list', 'array', { item: m.QueryDesc }),
  route('reports-list', 'GET', '/reports/list', 'array', { item: m.ReportDesc }),
  route('alerts-list', 'GET', '/alerts/list', 'map', { item: m.AlertType }),
  route('alerts', 'GET', '/alerts/{from}/{to}', 'array', { item: m.AlertRecord }),
  route('objects', 'POST', '/objects/{type}/{to}', 'array', { item: m.LookedUpObject, request: m.ObjectIds }),
  route('query', 'POST', '/queries/{id}/{to}', 'array', { item: m.QueryRow, request: m.QueryBody }),
  route('report', 'GET', '/reports/{id}/{from}/{to}', 'xlsx'),
  route('report-object', 'GET', '/reports/{id}/{from}/{to}/{objectId}', 'xlsx'),
] as const;
export type AuditRouteId = (typeof AUDIT_ROUTES)[number]['id'];

const VAR = /\{(\w+)\}/g;

function checkCatalog(routes: readonly AuditRouteDef[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    for (const key of [`id:${r.id}`, `route:${r.method} ${r.path}`, `file:${r.file}`]) {
      if (seen.has(key)) throw new Error(`audit route catalog: duplicate ${key}`);
      seen.add(key);
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
