import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { format } from 'date-fns/format';
import { REALMS_ROUTE, planRoute, planRoutes, type PlannedRoute, type TokenType } from '../api/catalog.js';
import { RealmsResponse } from '../api/models.js';
import { BodyError, checkBody } from '../api/decode.js';
import { HttpClient } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import type { ConnectionSettings } from '../config/settings.js';
import { tokenEnvName, tokenFlagName } from '../config/tokens.js';
import { FailedError, TokenRejectedError } from '../errors.js';
import type { Reporter } from '../progress/reporter.js';
import type { RealmsRecord, RouteRecord } from '../api/route-record.js';
import type { CollectionManifest } from './manifest.js';
import type { RawCollection } from './types.js';
import { TOOL } from '../version.js';
import { escapeControl } from '../util/escape.js';
import { redact } from '../util/redact.js';

export interface CollectDeps {
  readonly http: HttpClient;
  readonly reporter: Reporter;
  /** Cancels requests in flight when a token is refused. */
  readonly abort: AbortController;
  readonly now?: () => Date;
}

export interface CollectResult {
  readonly collection: RawCollection;
  readonly failed: RouteRecord[];
}

export const SKIP_REASON_3141 = 'route added in backend 3.14.1; not served here';

function noTokenReason(type: TokenType): string {
  return `no token for type ${type}: set ${tokenEnvName(type)} or ${tokenFlagName(type)} (or SVC_TOKEN for every type)`;
}

function rejected(route: string, type: TokenType, status: number, source: string): TokenRejectedError {
  const why = status === 401 ? 'is missing, invalid or expired' : `lacks type ${type} (or is not allowed this route)`;
  return new TokenRejectedError(
    `${status} on ${route}: the ${type} token (from ${source}) was refused; it ${why}. ` +
      `The token needs type ${type}; on backends before 3.14.1, pass a ${type} token with ${tokenFlagName(type)} or ${tokenEnvName(type)}. Nothing was published.`,
  );
}

/**
 * The raw collector: realms first, then every planned route with bounded
 * concurrency. Failed routes are recorded and the rest still collected; a
 * refused token stops everything at once.
 */
export async function collect(settings: ConnectionSettings, deps: CollectDeps): Promise<CollectResult> {
  const started = (deps.now ?? (() => new Date()))();
  const bodies = new Map<string, Buffer>();
  const parsed = new Map<string, unknown>();
  const records = new Map<string, RouteRecord>();
  const counts = new Map<string, number>();

  async function fetchRoute(p: PlannedRoute): Promise<RouteRecord> {
    const token = settings.tokens.byType[p.def.tokenType];
    if (!token) return { route: p.label, tokenType: p.def.tokenType, status: null, file: null, skipped: true, reason: noTokenReason(p.def.tokenType) };
    deps.reporter.routeStarted(p.label);
    try {
      const res = await deps.http.get({ label: p.label, url: settings.baseUrl + p.urlPath, headers: { cookie: `SVC_TOKEN=${token.value}` } });
      const base = { route: p.label, tokenType: p.def.tokenType, status: res.status, attempts: res.attempts, durationMs: res.durationMs };
      if (res.status === 401 || res.status === 403) throw rejected(p.label, p.def.tokenType, res.status, token.source);
      if (res.status === 404 && p.def.since !== null) return { ...base, file: null, skipped: true, reason: SKIP_REASON_3141 };
      if (res.status !== 200) {
        return { ...base, file: null, error: `HTTP ${res.status}${statusHint(res.status)}` };
      }
      const ct = res.headers['content-type'];
      // A body is only checked to be JSON of the route's shape (checkJson, which
      // builds nothing) and kept as bytes: a parsed body takes about 2.3 times
      // its bytes, and the build parses each body once, when it needs it. The
      // realm list decides the plan, so that one is parsed here.
      const keep = p.def === REALMS_ROUTE;
      const checked = checkBody(p.label, p.def, res.body, { contentType: Array.isArray(ct) ? ct[0] : ct, keep });
      if (checked.count !== undefined) counts.set(p.label, checked.count);
      if (keep) parsed.set(p.label, checked.value);
      bodies.set(p.label, res.body);
      return { ...base, file: p.file, bytes: res.body.length, sha256: createHash('sha256').update(res.body).digest('hex') };
    } catch (err) {
      if (err instanceof TokenRejectedError) {
        deps.abort.abort(err);
        throw err;
      }
      if (err instanceof BodyError) return { route: p.label, tokenType: p.def.tokenType, status: 200, file: null, error: err.detail };
      if (err instanceof HttpError) {
        if (p.def === REALMS_ROUTE && (err.kind === 'tls' || err.kind === 'network')) unreachable = err;
        return { route: p.label, tokenType: p.def.tokenType, status: err.status === 0 ? null : err.status, file: null, attempts: err.attempts, error: err.detail };
      }
      throw err;
    }
  }

  async function run(p: PlannedRoute): Promise<RouteRecord> {
    const rec = await fetchRoute(p);
    records.set(p.label, rec);
    deps.reporter.routeDone(rec, counts.get(p.label));
    return rec;
  }

  // Realms first: they decide which per-realm routes exist.
  let unreachable: HttpError | undefined;
  const realmsPlan = planRoute(REALMS_ROUTE);
  const realmsRec = await run(realmsPlan);
  // A TLS failure or an unreachable host on the first route would fail every
  // route after it, each with its retries: stop here and say why.
  if (unreachable) throw new FailedError(`cannot collect from ${settings.baseUrl}: ${unreachable.detail}. Nothing was published.`);
  if (realmsRec.status === 200 && settings.realmsGiven) {
    deps.reporter.warn('--realms is ignored: this backend lists its realms at GET /api/realms');
  }
  let realms: RealmsRecord;
  if (realmsRec.status === 200 && !realmsRec.error) {
    const check = RealmsResponse.safeParse(parsed.get(realmsPlan.label));
    if (check.success) {
      realms = { source: realmsPlan.label, ids: [...new Set(Object.values(check.data.realms).map((r) => r.id))] };
    } else {
      const issue = check.error.issues[0];
      realmsRec.error = redact(`the realms response does not have the documented shape (${escapeControl(issue?.path.join('.') || 'body')}: ${issue?.message ?? 'invalid'})`);
      delete realmsRec.sha256;
      delete realmsRec.bytes;
      realmsRec.file = null;
      bodies.delete(realmsPlan.label);
      realms = { source: realmsPlan.label, ids: [] };
    }
  } else if (realmsRec.error) {
    // Without the realm list the per-realm routes cannot be planned; the route is reported failed.
    realms = { source: realmsPlan.label, ids: [] };
  } else {
    realms = { source: '--realms', ids: [...settings.realms] };
  }

  const plan = planRoutes(realms.ids);
  const limit = pLimit(settings.concurrency);
  const settled = await Promise.allSettled(plan.map((p) => limit(() => run(p))));
  const fatal = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason instanceof TokenRejectedError) ?? settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (fatal) throw fatal.reason;

  const routes = [realmsPlan, ...plan].map((p) => records.get(p.label)!);
  const manifest: CollectionManifest = {
    kind: 'collection',
    tool: TOOL,
    baseUrl: settings.baseUrl,
    time: started.toISOString(),
    date: format(started, 'yyyy-MM-dd'),
    authMode: settings.tokens.authMode,
    realms,
    routes,
  };
  return { collection: { manifest, bodies }, failed: routes.filter((r) => r.error !== undefined) };
}

function statusHint(status: number): string {
  if (status === 404) return ' (not found: for a per-realm route, check the realm id)';
  if (status === 400) return ' (bad request)';
  return '';
}
