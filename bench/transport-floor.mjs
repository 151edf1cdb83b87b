// The transport floor of a live run: GET /api/realms, then every planned
// route through one HttpClient (dist/http/client.js) with the given number of
// requests in flight, each body received whole and dropped: nothing parsed,
// hashed, checked or written. No client that reads every body over this
// transport can be faster. Prints JSON.
//   node bench/transport-floor.mjs <baseUrl> <caFile> <token> <concurrency>
import pLimit from 'p-limit';
import { HttpClient } from '../dist/http/client.js';
import { REALMS_ROUTE, planRoute, planRoutes } from '../dist/api/catalog.js';
import { trustStore } from '../dist/config/values.js';

const [baseUrl, caFile, token, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const http = new HttpClient({ timeoutMs: 120_000, retries: 0, concurrency, ca: trustStore(caFile, {}), userAgent: 'svc-snapshot-bench' });
const headers = { cookie: `SVC_TOKEN=${token}` };
const fetchBody = async (p) => {
  const res = await http.get({ label: p.label, url: baseUrl + p.urlPath, headers });
  if (res.status !== 200) throw new Error(`${p.label}: HTTP ${res.status}`);
  return res.body;
};

const t0 = performance.now();
const realms = await fetchBody(planRoute(REALMS_ROUTE));
const ids = Object.values(JSON.parse(realms.toString('utf8')).realms).map((r) => r.id);
const limit = pLimit(concurrency);
const plan = planRoutes(ids);
let bytes = realms.length;
await Promise.all(
  plan.map((p) =>
    limit(async () => {
      const body = await fetchBody(p);
      bytes += body.length;
    }),
  ),
);
const ms = performance.now() - t0;
await http.close();
process.stdout.write(`${JSON.stringify({ ms, routes: plan.length + 1, bytes })}\n`);
