/**
 * The `--include vms` row alone, without the rest of `npm run bench`: the
 * large site collected once, then --replay and --replay --include vms
 * alternately. With a second binary (another build of the tool, e.g. the
 * release before --include), its --replay is timed in the same rounds, so
 * that the default run can be compared with and without this change.
 *
 *   npm run build && node --import tsx bench/include-once.ts [runs] [factor] [baseline-bin]
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { run, stat, withCollectedSite } from './harness.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
const baseline = process.argv[4] ? resolve(process.argv[4]) : undefined;
await withCollectedSite('include', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const timed = async (bin: string, extra: string[]) => {
    const out = join(workDir, 'out');
    const ms = (await run([bin, '--replay', raw, '--out-dir', out, '--quiet', ...extra], { workDir })).ms;
    rmSync(out, { recursive: true, force: true });
    return ms;
  };
  const replay: number[] = [];
  const vms: number[] = [];
  const before: number[] = [];
  for (let r = 0; r < runs; r++) {
    replay.push(await timed(BIN, []));
    vms.push(await timed(BIN, ['--include', 'vms']));
    if (baseline) before.push(await timed(baseline, []));
    log(
      `round ${r + 1}: replay ${replay[r]!.toFixed(0)} ms, --include vms ${vms[r]!.toFixed(0)} ms${baseline ? `, baseline replay ${before[r]!.toFixed(0)} ms` : ''}`,
    );
  }
  const rp = stat(replay)!.median;
  const iv = stat(vms)!.median;
  const bl = baseline ? stat(before)!.median : undefined;
  process.stdout.write(
    `${JSON.stringify({ factor, runs, replayMs: rp, includeVmsMs: iv, addedRatio: (iv - rp) / rp, ...(bl !== undefined ? { baselineReplayMs: bl, replayVsBaseline: rp / bl } : {}) })}\n`,
  );
});
