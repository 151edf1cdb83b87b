/**
 * Planning, pure: the realms route first, then, from what it answered, the
 * realm list and every other route. No I/O; the collector asks and acts.
 */
import { planRoutes, type PlannedRoute } from '../api/catalog.js';
import { RealmsResponse } from '../api/models.js';
import type { RealmsRecord, RouteRecord } from '../api/route-record.js';
import { escapeControl } from '../util/escape.js';
import { redact } from '../util/redact.js';

export interface RealmsDecision {
  readonly realms: RealmsRecord;
  /** Set when the realms body was received but does not have the documented shape: the route then fails. */
  readonly shapeError?: string;
  /** True when --realms was given but the backend lists its own (a warning). */
  readonly realmsFlagIgnored: boolean;
}

/**
 * The realm list from the realms route's outcome: the backend's own list
 * when it answered 200 with the documented shape; none when it failed (the
 * per-realm routes cannot be planned, the route is reported failed); else,
 * on a backend without the route (skipped as added in 3.14.1), `--realms`.
 */
export function decideRealms(
  rec: RouteRecord,
  body: unknown,
  given: readonly string[],
  realmsGiven: boolean,
): RealmsDecision {
  const source = rec.route;
  // The backend answered the route, so it lists its own realms (even when the answer is unusable).
  const realmsFlagIgnored = rec.status === 200 && realmsGiven;
  if (rec.status === 200 && !rec.error) {
    const check = RealmsResponse.safeParse(body);
    if (check.success) {
      return {
        realms: { source, ids: [...new Set(Object.values(check.data.realms).map((r) => r.id))] },
        realmsFlagIgnored,
      };
    }
    const issue = check.error.issues[0];
    return {
      realms: { source, ids: [] },
      shapeError: redact(
        `the realms response does not have the documented shape (${escapeControl(issue?.path.join('.') || 'body')}: ` +
          `${issue?.message ?? 'invalid'})`,
      ),
      realmsFlagIgnored,
    };
  }
  if (rec.error) return { realms: { source, ids: [] }, realmsFlagIgnored };
  return { realms: { source: '--realms', ids: [...given] }, realmsFlagIgnored };
}

/** Every route after the realms route, for these realms. */
export function planAfterRealms(realms: RealmsRecord): PlannedRoute[] {
  return planRoutes(realms.ids);
}
