import type { RouteRecord } from '../api/route-record.js';

/** The routes of a manifest counted and listed as the summaries print them. */
export function summariseRoutes(routes: readonly RouteRecord[]) {
  const skipped = routes.filter((r) => r.skipped);
  const failed = routes.filter((r) => r.error !== undefined);
  return {
    counts: {
      ok: routes.filter((r) => !r.skipped && !r.error).length,
      skipped: skipped.length,
      failed: failed.length,
    },
    skipped: skipped.map((r) => ({ route: r.route, reason: r.reason ?? '' })),
    failed: failed.map((r) => ({ route: r.route, status: r.status, error: r.error ?? '' })),
  };
}
