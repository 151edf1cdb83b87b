/**
 * Fetching one planned route into its route record: the request with the
 * token of the route's type, the status read, the body checked to be JSON of
 * the route's shape and kept as the exact bytes received. A refused token
 * throws (exit 3); every other failure is the record's `error`.
 */
import { REALMS_ROUTE, type PlannedRoute } from '../api/catalog.js';
import { BodyError, checkBody } from '../body/decode.js';
import type { RouteRecord } from '../api/route-record.js';
import type { ConnectionSettings } from '../config/settings.js';
import { tokenEnvName, tokenFlagName } from '../config/tokens.js';
import { managementAuth, tokenRefused } from '../http/auth.js';
import type { Fetched, HttpClient } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import { sha256Hex } from '../util/safe-read.js';

const SKIP_REASON_3141 = 'route added in backend 3.14.1; not served here';

export interface FetchedRoute {
  readonly record: RouteRecord;
  /** The exact bytes received, for a route that succeeded. */
  readonly body?: Buffer;
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

export async function fetchRoute(
  p: PlannedRoute,
  settings: ConnectionSettings,
  http: HttpClient,
  started: (label: string) => void,
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
    const res = await getRoute(http, settings.baseUrl, p, token.value);
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
    const checked = checkBody(p.label, p.def, res.body, { contentType: Array.isArray(ct) ? ct[0] : ct, keep });
    return {
      record: { ...base, file: p.file, bytes: res.body.length, sha256: sha256Hex(res.body) },
      body: res.body,
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
