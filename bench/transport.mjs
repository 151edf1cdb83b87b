// The client's own transport (dist/http/client.js) as the bench scripts use
// it: one HttpClient, the fake site's token as a cookie, any status but 200
// an error.
import { HttpClient } from '../dist/http/client.js';
import { REALMS_ROUTE, planRoute, planRoutes } from '../dist/api/catalog.js';
import { trustStore } from '../dist/config/values.js';

export function openClient(caFile, concurrency) {
  return new HttpClient({ timeoutMs: 120_000, retries: 0, concurrency, ca: trustStore(caFile, {}), userAgent: 'svc-snapshot-bench' });
}

/** The response to one planned route, which must be 200. */
export async function fetchOk(http, baseUrl, token, p) {
  const res = await http.read({ label: p.label, url: baseUrl + p.urlPath, headers: { cookie: `SVC_TOKEN=${token}` } });
  if (res.status !== 200) throw new Error(`${p.label}: HTTP ${res.status}`);
  return res;
}

export const realmsPlan = planRoute(REALMS_ROUTE);

/** Every route planned after Get Realms, given its body. */
export function planAfterRealms(realmsBody) {
  return planRoutes(Object.values(JSON.parse(realmsBody.toString('utf8')).realms).map((r) => r.id));
}
