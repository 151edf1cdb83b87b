// The critical path of a live run, measured with the client's own transport
// (dist/http/client.js): GET /api/realms, then every route of the site
// fetched alone, one at a time, each on a fresh HttpClient. Prints JSON.
//   node bench/critical-path.mjs <baseUrl> <caFile> <token>
import { HttpClient } from '../dist/http/client.js';
import { REALMS_ROUTE, planRoute, planRoutes } from '../dist/api/catalog.js';
import { trustStore } from '../dist/config/values.js';

const [baseUrl, caFile, token] = process.argv.slice(2);
const ca = trustStore(caFile, {});

async function fetchAlone(p) {
  const http = new HttpClient({ timeoutMs: 120_000, retries: 0, concurrency: 1, ca, userAgent: 'svc-snapshot-bench' });
  try {
    const t0 = performance.now();
    const res = await http.get({ label: p.label, url: baseUrl + p.urlPath, headers: { cookie: `SVC_TOKEN=${token}` } });
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${p.label}: HTTP ${res.status}`);
    return { route: p.label, ms, bytes: res.body.length, body: res.body };
  } finally {
    await http.close();
  }
}

const realms = await fetchAlone(planRoute(REALMS_ROUTE));
const ids = Object.values(JSON.parse(realms.body.toString('utf8')).realms).map((r) => r.id);
let slowest = { route: '', ms: 0, bytes: 0 };
for (const p of planRoutes(ids)) {
  const r = await fetchAlone(p);
  if (r.ms > slowest.ms) slowest = { route: r.route, ms: r.ms, bytes: r.bytes };
}
process.stdout.write(`${JSON.stringify({ realmsMs: realms.ms, slowest, totalMs: realms.ms + slowest.ms })}\n`);
