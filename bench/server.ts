/**
 * The benchmark's server: the fake backend over HTTPS on 127.0.0.1, in its own
 * process so its CPU is not the client's. Like test/fake/serve.ts, but the
 * dataset sizes are given in full:
 *
 *   node --import tsx bench/server.ts --sizes-json '{…}' --realms-json '[…]' --latency 50
 *
 * Prints one JSON line `{"url", "caFile", "token"}` once every body is
 * serialised; stops on SIGTERM or SIGINT.
 */
import { parseArgs } from 'node:util';
import { ALL_TYPES_TOKEN } from '../test/fake/backend.js';
import type { DatasetSizes } from '../test/fake/dataset.js';
import type { RealmSpec } from '../test/fake/types.js';
import { startFakeSite } from '../test/helpers/fake-site.js';

const { values } = parseArgs({
  options: {
    'sizes-json': { type: 'string' },
    'realms-json': { type: 'string' },
    latency: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    release: { type: 'string', default: '3.14.1' },
  },
  strict: true,
});

const sizes = values['sizes-json'] ? (JSON.parse(values['sizes-json']) as DatasetSizes) : undefined;
const realms = values['realms-json'] ? (JSON.parse(values['realms-json']) as RealmSpec[]) : undefined;
const release = values.release === '3.13.8' ? '3.13.8' : '3.14.1';
const site = await startFakeSite({ release, sizes, realms, seed: Number(values.seed), latencyMs: Number(values.latency) });
site.backend.warm();

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  site.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdout.write(`${JSON.stringify({ url: site.url, caFile: site.caFile, token: ALL_TYPES_TOKEN.value })}\n`);
