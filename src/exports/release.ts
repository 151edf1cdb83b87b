import { ROUTES } from '../api/catalog.js';
import type { RouteRecord } from '../api/route-record.js';

/** What the collection shows of the backend's release. */
export type BackendRelease = '3.14.1+' | 'before 3.14.1' | 'unknown';

const ROUTES_3141: ReadonlySet<string> = new Set(
  ROUTES.filter((r) => r.since === '3.14.1').map((r) => `${r.method} ${r.path}`),
);

/**
 * From the answers of the 3.14.1 routes (CONTRACT section 5): a backend
 * before 3.14.1 answers them 404, a 3.14.1 backend serves them. Unknown when
 * none was answered (not called for lack of a token, or failed). Read from
 * the routes, never from which fields the records happen to carry.
 */
export function backendRelease(routes: readonly RouteRecord[]): BackendRelease {
  let served = false;
  let notServed = false;
  for (const r of routes) {
    if (!ROUTES_3141.has(r.route)) continue;
    if (r.status === 404) notServed = true;
    else if (r.status !== null && r.status >= 200 && r.status < 300 && r.error === undefined) served = true;
  }
  // A backend that serves one 3.14.1 route is 3.14.1, whatever another answered.
  return served ? '3.14.1+' : notServed ? 'before 3.14.1' : 'unknown';
}
