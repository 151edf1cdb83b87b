/**
 * Fetching one planned route into its route record: the request with the
 * token of the route's type, the status read, the body checked to be JSON of
 * the route's shape and kept as the exact bytes received. A refused token
 * throws (exit 3); every other failure is the record's `error`.
 */
import { REALMS_ROUTE, type PlannedRoute } from '../api/catalog.js';
import { readFileSync } from 'node:fs';
import { BodyError, checkBody, countSlices } from '../body/decode.js';
import { openBody, type Body, type BodyFile } from '../body/file.js';
import { MAX_SLICE_BYTES, opensArray } from '../body/slices.js';
import type { RouteRecord } from '../api/route-record.js';
import type { ConnectionSettings } from '../config/settings.js';
import { tokenEnvName, tokenFlagName } from '../config/tokens.js';
import { managementAuth, tokenRefused } from '../http/auth.js';
import type { Fetched, HttpClient, Spool } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import { sha256Hex } from '../util/safe-read.js';

const SKIP_REASON_3141 = 'route added in backend 3.14.1; not served here';

export interface FetchedRoute {
  readonly record: RouteRecord;
  /** The exact bytes received, for a route that succeeded: in memory, or a large body's file in the spool. */
  readonly body?: Body;
  /** The number of records of a list body. */
  readonly count?: number;
  /** The parsed body, only for the realms route (it decides the plan). */
  readonly value?: unknown;
  /** The host could not be reached or its certificate was refused: every later route would fail the same way. */
  readonly unreachable?: HttpError;
}

function statusHint(status: number): string {
  if (status === 404) return ' (not found: for a per-realm route, check the realm id)';
  if (status === 400) return ' (bad request)';
  return '';
}

/** A GET of a planned management API route, `token` in its cookie. */
export function getRoute(http: HttpClient, baseUrl: string, p: PlannedRoute, token: string): Promise<Fetched> {
  return http.read({ label: p.label, url: baseUrl + p.urlPath, headers: managementAuth(token) });
}

/**
 * A spooled body checked as checkBody checks one in memory: an array a slice
 * at a time from its file; anything else read back whole (as a replay reads
 * it), which only a body within MAX_SLICE_BYTES may be.
 */
function checkSpooled(
  label: string,
  def: PlannedRoute['def'],
  file: BodyFile,
  keep: boolean,
  contentType: string | undefined,
): { body: Body; checked: { count?: number; value?: unknown } } {
  const type = contentType ? { contentType } : {};
  const reader = openBody(file);
  try {
    if (!keep && opensArray(reader)) return { body: file, checked: { count: countSlices(label, def, reader, type) } };
  } finally {
    reader.done();
  }
  if (file.size > MAX_SLICE_BYTES) {
    throw new BodyError(
      label,
      `expected a JSON ${def.shape} but received ${file.size} bytes that do not open a JSON array; a body over ` +
        `${MAX_SLICE_BYTES / 1024 / 1024} MB is only read as an array`,
    );
  }
  const bytes = readFileSync(file.path);
  return { body: bytes, checked: checkBody(label, def, bytes, { ...type, keep }) };
}

export async function fetchRoute(
  p: PlannedRoute,
  settings: ConnectionSettings,
  http: HttpClient,
  started: (label: string) => void,
  spool: Spool,
): Promise<FetchedRoute> {
  const type = p.def.tokenType;
  const token = settings.tokens.byType[type];
  const head = { route: p.label, tokenType: type };
  if (!token) {
    const reason = `no token for type ${type}: set ${tokenEnvName(type)} or ${tokenFlagName(type)} (or SVC_TOKEN for every type)`;
    return { record: { ...head, status: null, file: null, skipped: true, reason } };
  }
  started(p.label);
  try {
    const res = await http.readSpooled(
      { label: p.label, url: settings.baseUrl + p.urlPath, headers: managementAuth(token.value) },
      spool,
    );
    const base = { ...head, status: res.status, attempts: res.attempts, durationMs: res.durationMs };
    if (res.status === 401 || res.status === 403) {
      // A 401 refuses the token itself, whatever its types; only a 403 is about the type.
      throw tokenRefused({
        route: p.label,
        status: res.status,
        token: res.status === 401 ? 'token' : `${type} token`,
        source: token.source,
        why: {
          401: 'the server does not accept the token itself (it is missing, invalid or expired), whatever types it has',
          403: `it lacks type ${type} (or is not allowed this route)`,
        },
        advice:
          res.status === 401
            ? `Check the token's value and that it has not expired or been revoked (svc-snapshot check shows what each token reaches).`
            : `The token needs type ${type}; on backends before 3.14.1, pass a ${type} token with ${tokenFlagName(type)} or ${tokenEnvName(type)}.`,
      });
    }
    if (res.status === 404 && p.def.since !== null)
      return { record: { ...base, file: null, skipped: true, reason: SKIP_REASON_3141 } };
    if (res.status !== 200)
      return { record: { ...base, file: null, error: `HTTP ${res.status}${statusHint(res.status)}` } };
    const ct = res.headers['content-type'];
    // A body is only checked to be JSON of the route's shape (a scan that builds nothing) and kept as bytes: the
    // build parses each body once, when it needs it. The realm list decides the plan, so that one is parsed here.
    const keep = p.def === REALMS_ROUTE;
    const contentType = Array.isArray(ct) ? ct[0] : ct;
    const { body, checked } = Buffer.isBuffer(res.body)
      ? { body: res.body, checked: checkBody(p.label, p.def, res.body, { contentType, keep }) }
      : checkSpooled(p.label, p.def, res.body, keep, contentType);
    const sha256 = Buffer.isBuffer(res.body) ? sha256Hex(res.body) : res.body.sha256;
    return {
      record: { ...base, file: p.file, bytes: Buffer.isBuffer(body) ? body.length : body.size, sha256 },
      body,
      ...(checked.count !== undefined ? { count: checked.count } : {}),
      ...(keep ? { value: checked.value } : {}),
    };
  } catch (err) {
    if (err instanceof BodyError) return { record: { ...head, status: 200, file: null, error: err.detail } };
    if (err instanceof HttpError) {
      const unreachable = p.def === REALMS_ROUTE && (err.kind === 'tls' || err.kind === 'network') ? err : undefined;
      return {
        record: {
          ...head,
          status: err.status === 0 ? null : err.status,
          file: null,
          attempts: err.attempts,
          error: err.detail,
        },
        ...(unreachable ? { unreachable } : {}),
      };
    }
    throw err;
  }
}
