import { planRoute, routeById, TOKEN_TYPES, type RouteDef, type TokenType } from '../api/catalog.js';
import { getRoute } from '../collect/fetch-route.js';
import { BodyError, checkBody } from '../body/decode.js';
import { RealmsResponse } from '../api/models.js';
import { resolveConnection, type ConnectionSettings } from '../config/settings.js';
import { readOptions } from '../config/options.js';
import type { ResolvedToken } from '../config/values.js';
import { withHttpClient, type Fetched, type HttpClient } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import { describeTls, observeTls, tlsForJson, tlsVerdict } from '../http/tls-observer.js';
import { escapeControl } from '../util/escape.js';
import { EXIT } from '../exit-codes.js';
import type { CommandDeps, CommandResult, RawFlags } from './context.js';
import { runCheckAudit, safeJson } from './check-audit.js';
import type { CheckSummary } from '../summaries/schemas.js';

/** What check finds; --json prints it with TLS as tlsForJson says. */
export type CheckReport = Omit<CheckSummary, 'tls'> & { tls: { ok: boolean; error?: string } };

/**
 * The cheapest GET route of each type: a small 3.14.1 route where the backend
 * serves it, else the oldest route of the type.
 */
const PROBES: Record<TokenType, { newer: string; older: string }> = {
  User: { newer: 'users-managed-objects', older: 'users' },
  Team: { newer: 'teams-usage', older: 'teams' },
  Drive: { newer: 'drives', older: 'drives' },
  VM: { newer: 'realms', older: 'vms-active' },
  Project: { newer: 'security-levels', older: 'projects' },
};

type Probe = { kind: 'answer'; res: Fetched; label: string; def: RouteDef } | { kind: 'error'; err: HttpError };

/**
 * Why a 200 answer is not what the route returns (a login page, a proxy's
 * error page, another shape), as the snapshot would refuse it; undefined
 * when it is JSON of the route's shape.
 */
function bodyProblem(answer: Extract<Probe, { kind: 'answer' }>): string | undefined {
  const ct = answer.res.headers['content-type'];
  try {
    checkBody(answer.label, answer.def, answer.res.body, { contentType: Array.isArray(ct) ? ct[0] : ct });
    return undefined;
  } catch (err) {
    if (err instanceof BodyError) return err.message;
    throw err;
  }
}

export async function runCheck(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('check', flags, deps.env);
  if (o.audit) return runCheckAudit(o, deps);
  const settings = resolveConnection(o, deps.env);
  return withHttpClient({ ...settings, retries: Math.min(settings.retries, 1) }, deps.dispatcher, async (http) => {
    const observer = observeTls(new URL(settings.baseUrl).hostname);
    try {
      const checked = await check(settings, http);
      const tls = tlsVerdict(settings.baseUrl, observer.authorized(), checked.tls, checked.reachable);
      const report =
        tls === checked.tls
          ? checked
          : { ...checked, tls, tokens: tls.ok ? checked.tokens : [], ok: checked.ok && tls.ok };
      deps.reporter.close();
      const json: CheckSummary = { ...report, tls: tlsForJson(settings.baseUrl, report.tls, report.reachable) };
      deps.stdout(o.json ? `${JSON.stringify(json, null, 2)}\n` : formatCheck(settings.baseUrl, report));
      if (report.ok) return { exitCode: EXIT.ok };
      if (!report.reachable || !report.tls.ok) return { exitCode: EXIT.failed };
      return { exitCode: report.tokens.some((t) => t.refused.length > 0) ? EXIT.tokenRejected : EXIT.failed };
    } finally {
      observer.stop();
    }
  });
}

/** One GET of `def` with `token` (a per-realm route in the first realm of --realms). */
async function probe(
  settings: ConnectionSettings,
  http: HttpClient,
  def: RouteDef,
  token: ResolvedToken,
): Promise<Probe> {
  const p = planRoute(def, def.perRealm ? settings.realms[0] : undefined);
  try {
    return { kind: 'answer', res: await getRoute(http, settings.baseUrl, p, token.value), label: p.label, def };
  } catch (err) {
    if (err instanceof HttpError) return { kind: 'error', err };
    throw err;
  }
}

export async function check(settings: ConnectionSettings, http: HttpClient): Promise<CheckReport> {
  const report: CheckReport = {
    reachable: true,
    tls: { ok: true },
    release: 'unknown',
    tokens: [],
    realms: { source: '--realms', ids: [...settings.realms] },
    ok: false,
  };
  // Group the types by the token that serves them: each token is tried once per type.
  const byToken = new Map<string, { token: ResolvedToken; types: TokenType[] }>();
  for (const type of TOKEN_TYPES) {
    const t = settings.tokens.byType[type];
    if (!t) continue;
    const entry = byToken.get(t.source) ?? { token: t, types: [] };
    entry.types.push(type);
    byToken.set(t.source, entry);
  }
  let newerServed: boolean | undefined;
  for (const { token, types } of byToken.values()) {
    const row = {
      source: token.source,
      types,
      reaches: [] as TokenType[],
      refused: [] as TokenType[],
      refusedWith: [] as Array<{ type: TokenType; status: number }>,
      errors: [] as string[],
    };
    for (const type of types) {
      const newer = routeById(PROBES[type].newer);
      let outcome = await probe(settings, http, newer, token);
      if (outcome.kind === 'error') {
        if (outcome.err.kind === 'tls') report.tls = { ok: false, error: outcome.err.detail };
        // A body over the limit was an answer: the host is reachable, the route is this token's error.
        if (outcome.err.status === 0)
          report.reachable = ['tls', 'timeout', 'size'].includes(outcome.err.kind) ? report.reachable : false;
        if (!report.reachable || !report.tls.ok) return { ...report, tokens: [] };
        row.errors.push(outcome.err.message);
        continue;
      }
      if (outcome.res.status === 404 && newer.since !== null) {
        newerServed = false;
        outcome = await probe(settings, http, routeById(PROBES[type].older), token);
        if (outcome.kind === 'error') {
          row.errors.push(outcome.err.message);
          continue;
        }
      } else if (newer.since !== null && outcome.res.status !== 401 && outcome.res.status !== 403) {
        newerServed = true;
      }
      const status = outcome.res.status;
      const problem = status === 200 ? bodyProblem(outcome) : undefined;
      if (problem !== undefined) row.errors.push(problem);
      else if (status === 200) row.reaches.push(type);
      else if (status === 401 || status === 403) {
        row.refused.push(type);
        row.refusedWith.push({ type, status });
      } else row.errors.push(`${type}: HTTP ${status}`);
      if (type === 'VM' && status === 200 && !problem && newer.id === 'realms' && newerServed) {
        const parsed = RealmsResponse.safeParse(safeJson(outcome.res.body));
        if (parsed.success)
          report.realms = { source: 'GET /api/realms', ids: Object.values(parsed.data.realms).map((r) => r.id) };
      }
    }
    const { errors, refusedWith, ...kept } = row;
    report.tokens.push({
      ...kept,
      ...(refusedWith.length ? { refusedWith } : {}),
      ...(errors.length ? { errors } : {}),
    });
  }
  report.release = newerServed === undefined ? 'unknown' : newerServed ? '3.14.1+' : 'before 3.14.1';
  report.ok = report.reachable && report.tls.ok && report.tokens.every((t) => t.refused.length === 0 && !t.errors);
  return report;
}

function formatCheck(baseUrl: string, r: CheckReport): string {
  const lines = [`Checking ${baseUrl}`];
  lines.push(`  reachable: ${r.reachable ? 'yes' : 'no'}`);
  lines.push(`  TLS: ${describeTls(baseUrl, r.tls, r.reachable)}`);
  if (r.reachable && r.tls.ok) {
    lines.push(`  backend release: ${r.release}`);
    for (const t of r.tokens) {
      const refused = t.refused.map((type) => {
        const status = t.refusedWith?.find((r) => r.type === type)?.status;
        const why = status === 401 ? ': the token itself is not accepted' : status === 403 ? ': type not granted' : '';
        return status === undefined ? type : `${type} (${status}${why})`;
      });
      lines.push(
        `  token from ${t.source}: reaches ${t.reaches.join(', ') || 'nothing'}${refused.length ? `; REFUSED for ${refused.join(', ')}` : ''}`,
      );
      for (const e of t.errors ?? []) lines.push(`    error: ${e}`);
    }
    const covered = new Set(r.tokens.flatMap((t) => t.types));
    const missing = TOKEN_TYPES.filter((t) => !covered.has(t));
    if (missing.length) lines.push(`  no token for ${missing.join(', ')}: those routes would be skipped`);
    lines.push(`  realms (${r.realms.source}): ${r.realms.ids.map(escapeControl).join(', ') || 'none'}`);
  }
  lines.push(r.ok ? 'OK: a snapshot would run.' : 'NOT OK: a snapshot would not run as things are.');
  return `${lines.join('\n')}\n`;
}
