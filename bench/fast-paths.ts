/**
 * What each fast path of the exports wing (src/exports/fast/) still earns:
 * the bench's large site is collected once from the fake server, then
 * bench/fast-paths-ab.mjs builds it in one process with every fast path on,
 * each one off and all off, interleaved round by round (medians of CPU time,
 * so the other core's load weighs less), and checks the bytes are the same
 * in every variant. The JSON scan is measured where it works: the
 * collector's check of every body, against JSON.parse.
 *
 *   node --import tsx bench/fast-paths.ts                 # 5 rounds, the large site
 *   node --import tsx bench/fast-paths.ts --runs 7 --factor 0.5
 *
 * docs/architecture.md quotes its figures. It is not part of `npm run bench`:
 * it measures the code, not a target.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, startServer } from './harness.js';
import { site } from './workload.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, factor: { type: 'string', default: '1' } },
  strict: true,
});
const runs = Number(values.runs);
const factor = Number(values.factor);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs is a whole number ≥ 1');
if (!(factor > 0)) throw new Error('--factor is a number > 0');

const BIN = join(REPO_ROOT, 'bin', 'svc-snapshot.js');
const work = mkdtempSync(join(tmpdir(), 'svc-fast-paths-'));
const server = await startServer(site('large', factor), 0, (l) => process.stderr.write(`fast-paths: ${l}\n`));
try {
  const raw = join(work, 'raw');
  const collected = spawnSync(
    process.execPath,
    [BIN, 'collect', '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', raw, '--quiet'],
    {
      env: { PATH: process.env.PATH ?? '', SVC_TOKEN: server.token },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (collected.status !== 0) throw new Error(`collect exited ${collected.status}`);
  const ab = spawnSync(
    process.execPath,
    ['--expose-gc', join(REPO_ROOT, 'bench', 'fast-paths-ab.mjs'), raw, String(runs)],
    { stdio: 'inherit' },
  );
  if (ab.status !== 0) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
