// The critical path of a live run, measured with the client's own transport
// (bench/transport.mjs): GET /api/realms, then every route of the site
// fetched alone, one at a time, each on a fresh HttpClient. Prints JSON.
//   node bench/critical-path.mjs <baseUrl> <caFile> <token>
import { fetchOk, openClient, planAfterRealms, realmsPlan } from './transport.mjs';

const [baseUrl, caFile, token] = process.argv.slice(2);

async function fetchAlone(p) {
  const http = openClient(caFile, 1);
  try {
    const t0 = performance.now();
    const res = await fetchOk(http, baseUrl, token, p);
    return { route: p.label, ms: performance.now() - t0, bytes: res.body.length, body: res.body };
  } finally {
    await http.close();
  }
}

const realms = await fetchAlone(realmsPlan);
let slowest = { route: '', ms: 0, bytes: 0 };
for (const p of planAfterRealms(realms.body)) {
  const r = await fetchAlone(p);
  if (r.ms > slowest.ms) slowest = { route: r.route, ms: r.ms, bytes: r.bytes };
}
process.stdout.write(`${JSON.stringify({ realmsMs: realms.ms, slowest, totalMs: realms.ms + slowest.ms })}\n`);
