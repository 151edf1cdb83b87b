/**
 * The raw collector: plan (plan.ts), fetch each route into its record
 * (fetch-route.ts), run them with bounded concurrency (runner.ts). Realms
 * first, since they decide the plan; failed routes are recorded and the rest
 * still collected; a refused token stops everything at once.
 */
import { format } from 'date-fns/format';
import { planRoute, REALMS_ROUTE, type PlannedRoute } from '../api/catalog.js';
import type { RouteRecord } from '../api/route-record.js';
import type { ConnectionSettings } from '../config/settings.js';
import { FailedError, TokenRejectedError } from '../errors.js';
import type { HttpClient, Spool } from '../http/client.js';
import type { Body } from '../body/file.js';
import type { Reporter } from '../progress/reporter.js';
import { TOOL } from '../version.js';
import { fetchRoute, type FetchedRoute } from './fetch-route.js';
import type { CollectionManifest } from '../manifests.js';
import { decideRealms, planAfterRealms } from './plan.js';
import { markFailed } from './replay.js';
import { runRoutes } from './runner.js';
import type { RawCollection } from './types.js';

export interface CollectDeps {
  readonly http: HttpClient;
  readonly reporter: Reporter;
  /** Cancels requests in flight when a token is refused. */
  readonly abort: AbortController;
  readonly now?: () => Date;
  /**
   * Told of each route as soon as its record is final, with its body: the
   * realms route once the realms are decided (before any other route is
   * fetched), then every other. A body it takes (returns true) is the
   * caller's: it is not kept in the collection.
   */
  readonly onRoute?: (record: RouteRecord, body: Body | undefined, realms: CollectionManifest['realms']) => boolean;
  /** Where a large body is written as it arrives (a BodySpool); the caller removes it once its files are read. */
  readonly spool: Spool;
}

export interface CollectResult {
  readonly collection: RawCollection;
  readonly failed: RouteRecord[];
}

/** The collection's date (its manifest's `date`, and the default directory's name) for the time it started. */
export function collectionDate(started: Date): string {
  return format(started, 'yyyy-MM-dd');
}

export async function collect(settings: ConnectionSettings, deps: CollectDeps): Promise<CollectResult> {
  const started = (deps.now ?? (() => new Date()))();
  const bodies = new Map<string, Body>();
  let decidedRealms: CollectionManifest['realms'] | undefined;
  const fetchOne = async (p: PlannedRoute): Promise<FetchedRoute> => {
    const started = (label: string) => deps.reporter.routeStarted(label);
    const got = await fetchRoute(p, settings, deps.http, started, deps.spool).catch((err: unknown) => {
      if (err instanceof TokenRejectedError) deps.reporter.routeRefused?.(p.label);
      throw err;
    });
    deps.reporter.routeDone(got.record, got.count);
    // The realms route's record is final only once the realms are decided (below).
    const taken =
      decidedRealms !== undefined && deps.onRoute !== undefined && deps.onRoute(got.record, got.body, decidedRealms);
    if (got.body && !taken) bodies.set(p.label, got.body);
    // The runner keeps every result until the last route is in: without the body, a body taken is freed once its taker drops it.
    const { body: _body, ...rest } = got;
    return rest;
  };

  // The realm list decides the plan, so the realms route comes first.
  const realmsPlan = planRoute(REALMS_ROUTE);
  const [first] = await runRoutes([realmsPlan], 1, deps.abort, fetchOne);
  // A TLS failure or an unreachable host on the first route would fail every
  // route after it, each with its retries: stop here and say why.
  if (first!.unreachable)
    throw new FailedError(
      `cannot collect from ${settings.baseUrl}: ${first!.unreachable.detail}. Nothing was published.`,
    );
  const realmsRec = first!.record;
  const decided = decideRealms(realmsRec, first!.value, settings.realms, settings.realmsGiven);
  if (decided.realmsFlagIgnored)
    deps.reporter.warn('--realms is ignored: this backend lists its realms at GET /api/realms');
  if (decided.shapeError !== undefined) {
    markFailed(realmsRec, decided.shapeError);
    bodies.delete(realmsPlan.label);
  }
  decidedRealms = decided.realms;
  if (deps.onRoute?.(realmsRec, bodies.get(realmsPlan.label), decided.realms)) bodies.delete(realmsPlan.label);

  const rest = await runRoutes(planAfterRealms(decided.realms), settings.concurrency, deps.abort, fetchOne);
  const routes = [realmsRec, ...rest.map((r) => r.record)];
  const manifest: CollectionManifest = {
    kind: 'collection',
    tool: TOOL,
    baseUrl: settings.baseUrl,
    time: started.toISOString(),
    date: collectionDate(started),
    authMode: settings.tokens.authMode,
    realms: decided.realms,
    routes,
  };
  return { collection: { manifest, bodies }, failed: routes.filter((r) => r.error !== undefined) };
}
