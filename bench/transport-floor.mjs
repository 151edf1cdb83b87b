// The transport floor of a live run: GET /api/realms, then every planned
// route through one HttpClient (bench/transport.mjs) with the given number of
// requests in flight, each body received whole and dropped: nothing parsed,
// hashed, checked or written. No client that reads every body over this
// transport can be faster. Prints JSON: its time and CPU time (this process,
// every thread) over the same span.
//   node bench/transport-floor.mjs <baseUrl> <caFile> <token> <concurrency>
import pLimit from 'p-limit';
import { fetchOk, openClient, planAfterRealms, realmsPlan } from './transport.mjs';

const [baseUrl, caFile, token, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const http = openClient(caFile, concurrency);

const t0 = performance.now();
const cpu0 = process.cpuUsage();
const realms = (await fetchOk(http, baseUrl, token, realmsPlan)).body;
const plan = planAfterRealms(realms);
const limit = pLimit(concurrency);
let bytes = realms.length;
await Promise.all(
  plan.map((p) =>
    limit(async () => {
      const { body } = await fetchOk(http, baseUrl, token, p);
      bytes += body.length;
    }),
  ),
);
const ms = performance.now() - t0;
const used = process.cpuUsage(cpu0);
await http.close();
process.stdout.write(`${JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, routes: plan.length + 1, bytes })}\n`);
