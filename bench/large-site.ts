/**
 * The bench's large site as files, to measure a change by hand
 * (docs/performance.md, "A change against the build before"): its raw
 * collection, collected once from the fake server, and a second collection
 * of the same site with DIFF_CHANGED_SHARE of its records changed
 * (bench/mutate.mjs): the night before of the diff and the report.
 *
 *   npm run build && node --import tsx bench/large-site.ts <dir> [factor]
 *
 * writes <dir>/raw and <dir>/raw-changed (about 160 MB each at factor 1).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, run, startServer } from './harness.js';
import { DIFF_CHANGED_SHARE, site } from './workload.js';

const [dirArg, factorArg] = process.argv.slice(2);
if (dirArg === undefined) throw new Error('usage: node --import tsx bench/large-site.ts <dir> [factor]');
const dir = resolve(dirArg);
const factor = Number(factorArg ?? 1);
if (!(factor > 0)) throw new Error('factor is a number > 0');
if (existsSync(join(dir, 'raw')) || existsSync(join(dir, 'raw-changed')))
  throw new Error(`${dir} already holds raw or raw-changed`);
mkdirSync(dir, { recursive: true });
const bin = join(REPO_ROOT, 'bin', 'svc-snapshot.js');
const log = (l: string) => process.stderr.write(`large-site: ${l}\n`);
const server = await startServer(site('large', factor), 0, log);
try {
  await run(
    [bin, 'collect', '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', join(dir, 'raw'), '--quiet'],
    { env: { SVC_TOKEN: server.token }, workDir: dir },
  );
} finally {
  await server.stop();
}
const changed = await run(
  [join(REPO_ROOT, 'bench', 'mutate.mjs'), join(dir, 'raw'), join(dir, 'raw-changed'), String(DIFF_CHANGED_SHARE)],
  { workDir: dir },
);
log(`written ${join(dir, 'raw')} and ${join(dir, 'raw-changed')}: ${changed.stdout.trim()}`);
