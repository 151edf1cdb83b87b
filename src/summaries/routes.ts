import type { RouteRecord } from '../api/route-record.js';

/** The routes of a manifest counted and listed as the summaries print them. */
export function summariseRoutes(routes: readonly RouteRecord[]) {
  return {
    counts: {
      ok: routes.filter((r) => !r.skipped && !r.error).length,
      skipped: routes.filter((r) => r.skipped).length,
      failed: routes.filter((r) => r.error !== undefined).length,
    },
    skipped: routes.filter((r) => r.skipped).map((r) => ({ route: r.route, reason: r.reason ?? '' })),
    failed: routes
      .filter((r) => r.error !== undefined)
      .map((r) => ({ route: r.route, status: r.status, error: r.error ?? '' })),
  };
}
