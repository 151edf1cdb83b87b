import { UsageError } from '../errors.js';
import { resolveTransport, type Transport } from '../config/settings.js';
import type { CommandOptions } from '../config/options.js';
import type { ResolvedToken } from '../config/values.js';

export interface ReportRequest {
  readonly id: string;
  readonly objectId?: string;
}

/** One `--objects`: a type and the ids to look up (empty: all objects of the type). */
export interface ObjectsRequest {
  readonly type: string;
  readonly ids: readonly string[];
}

export interface AuditSettings extends Transport {
  /** Normalised, without a trailing `/`. */
  readonly auditUrl: string;
  readonly token: ResolvedToken;
  readonly from: string;
  readonly to: string;
  readonly queries: readonly string[];
  /** `--param` values by parameter id, as typed; converted per query later. */
  readonly params: ReadonlyMap<string, string>;
  readonly reports: readonly ReportRequest[];
  readonly objects: readonly ObjectsRequest[];
}

/** The audit service's URL, from --audit-url or SVC_AUDIT_URL (read and normalised by the option records). */
export function requireAuditUrl(url: string | undefined): string {
  if (url === undefined)
    throw new UsageError('no audit service URL given: pass --audit-url https://audit.example.org or set SVC_AUDIT_URL');
  return url;
}

/** SVC_AUDIT_TOKEN wins over --audit-token (README.md, "The audit service"; the option record says so). The message never holds the value. */
export function requireAuditToken(token: ResolvedToken | undefined): ResolvedToken {
  if (token === undefined) {
    throw new UsageError(
      'no audit token given: set SVC_AUDIT_TOKEN (or pass --audit-token) with a token created in the audit front end',
    );
  }
  return token;
}

/** `--param name=value`, split at the first `=`; the last of a repeated name wins. */
export function parseParams(raw: readonly string[] | undefined): Map<string, string> {
  const params = new Map<string, string>();
  for (const p of raw ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) {
      throw new UsageError(`--param "${p.slice(0, 80)}" must be name=value, e.g. --param user=alice`);
    }
    params.set(p.slice(0, eq), p.slice(eq + 1));
  }
  return params;
}

/** `--report id[:objectId]`, split at the first `:`; duplicates dropped. */
export function parseReports(raw: readonly string[] | undefined): ReportRequest[] {
  const out: ReportRequest[] = [];
  const seen = new Set<string>();
  for (const r of raw ?? []) {
    const colon = r.indexOf(':');
    const id = colon < 0 ? r : r.slice(0, colon);
    const objectId = colon < 0 ? undefined : r.slice(colon + 1);
    if (id === '' || objectId === '') {
      throw new UsageError(
        `--report "${r.slice(0, 80)}" must be <id> or <id>:<objectId>, e.g. --report monthly or --report user-activity:alice`,
      );
    }
    if (objectId === '.' || objectId === '..') {
      throw new UsageError(
        `--report ${id}:${objectId}: "${objectId}" cannot be sent as an object id (URL parsing would remove it from the path)`,
      );
    }
    const key = JSON.stringify([id, objectId ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(objectId === undefined ? { id } : { id, objectId });
  }
  return out;
}

/**
 * An object type: the spec does not list the allowed values of {Type}, so a
 * type must at least be a plain name. It is a URL path segment and part of
 * the file name `objects-<Type>-<to>.json`: no separator, dot segment,
 * percent sign, space or control character can reach either.
 */
export const OBJECT_TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Shown in messages instead of a value that may hold control characters or be very long. */
function shown(raw: string): string {
  return JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
}

/**
 * `--objects Type[:id,id…]`: split at the first `:`, ids at `,`, duplicate
 * ids dropped (first kept). No colon: every object of the type (`[]`). A type
 * given twice is refused, since both would write the same file.
 */
export function parseObjects(raw: readonly string[] | undefined): ObjectsRequest[] {
  const out: ObjectsRequest[] = [];
  const types = new Map<string, string>();
  for (const r of raw ?? []) {
    const colon = r.indexOf(':');
    const type = colon < 0 ? r : r.slice(0, colon);
    if (!OBJECT_TYPE_PATTERN.test(type)) {
      throw new UsageError(
        `--objects ${shown(r)}: the object type ${shown(type)} is not a plain name (a letter, then up to 63 letters, digits, "_" or "-"); ` +
          'the audit service does not document its types, so use the name your audit front end shows, e.g. --objects User or --objects User:alice,bob',
      );
    }
    const ids = colon < 0 ? [] : r.slice(colon + 1).split(',');
    if (colon >= 0 && ids.some((id) => id === '')) {
      throw new UsageError(
        `--objects ${shown(r)}: an empty id; give ids as --objects ${type}:<id>,<id>, or --objects ${type} (no ` +
          `colon) for all objects of the type`,
      );
    }
    // Files are compared without case: on a case-insensitive file system User and user would be one file.
    const previous = types.get(type.toLowerCase());
    if (previous !== undefined) {
      throw new UsageError(
        `--objects ${previous} and --objects ${type} would both write objects-${type}-<to>.json; give each type ` +
          `once, with all its ids (--objects ${type}:<id>,<id>)`,
      );
    }
    types.set(type.toLowerCase(), type);
    out.push({ type, ids: [...new Set(ids)] });
  }
  return out;
}

/**
 * Flags and environment → settings, checking everything that can be checked
 * before any request: URL, token shape, dates and their order, the syntax of
 * --param, --report and --objects, and the transport options.
 */
export function resolveAuditSettings(o: CommandOptions<'audit'>, env: NodeJS.ProcessEnv): AuditSettings {
  const auditUrl = requireAuditUrl(o.auditUrl);
  const token = requireAuditToken(o.auditToken);
  const { from, to } = o;
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}; the period must not end before it starts`);
  const queries = [...new Set(o.query ?? [])];
  if (queries.some((q) => q === '')) throw new UsageError('--query needs a query id, e.g. --query logins');
  const params = parseParams(o.param);
  if (params.size > 0 && queries.length === 0) {
    throw new UsageError('--param sets parameters of the queries given with --query; add --query <id>');
  }
  const reports = parseReports(o.report);
  const objects = parseObjects(o.objects);
  return { auditUrl, token, from, to, queries, params, reports, objects, ...resolveTransport(o, env) };
}
