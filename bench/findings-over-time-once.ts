/**
 * The findings-over-time rows alone (bench/findings-over-time.ts), without
 * the rest of `npm run bench`: the large site collected once, its mutated
 * twin replayed as the night before, then rounds of --replay, --findings,
 * --findings beside the night before with 1,000 waivers, and findings <dir>
 * --json and --format csv.
 *
 *   npm run build && node --import tsx bench/findings-over-time-once.ts [runs] [factor]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH, run, stat, withCollectedSite } from './harness.js';
import { overTimeContext, overTimeRound } from './findings-over-time.js';
import { DIFF_CHANGED_SHARE } from './workload.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
await withCollectedSite('over-time', factor, async ({ raw, workDir, bin, log }) => {
  const mutated = join(workDir, 'raw-changed');
  await run([join(BENCH, 'mutate.mjs'), raw, mutated, String(DIFF_CHANGED_SHARE)], { workDir });
  const ctx = await overTimeContext(bin, mutated, raw, join(workDir, 'nights'), workDir, run);
  const replay: number[] = [];
  const rounds: Array<Awaited<ReturnType<typeof overTimeRound>>> = [];
  for (let r = 0; r < runs; r++) {
    const a = join(workDir, `a-${r}`);
    replay.push((await run([bin, '--replay', raw, '--out-dir', a, '--quiet'], { workDir })).ms);
    rmSync(a, { recursive: true, force: true });
    const round = await overTimeRound(ctx, `${r}`);
    rounds.push(round);
    log(
      `round ${r + 1}: replay ${replay[r]!.toFixed(0)} ms, --findings ${round.findingsMs.toFixed(0)} ms, ` +
        `with the night before and 1,000 waivers ${round.lifecycleMs.toFixed(0)} ms, findings <dir> --json ` +
        `${round.jsonMs.toFixed(0)} ms, --format csv ${round.csvMs.toFixed(0)} ms`,
    );
  }
  const median = (xs: number[]) => stat(xs)!.median;
  const rp = median(replay);
  const lifecycleAdded = median(rounds.map((x) => x.lifecycleMs)) - median(rounds.map((x) => x.findingsMs));
  const csvAdded = median(rounds.map((x) => x.csvMs)) - median(rounds.map((x) => x.jsonMs));
  process.stdout.write(
    `${JSON.stringify({ factor, runs, replayMs: rp, lifecycleAddedRatio: lifecycleAdded / rp, csvAddedRatio: csvAdded / rp })}\n`,
  );
});
