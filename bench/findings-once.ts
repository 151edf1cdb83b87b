/**
 * The findings row alone, without the rest of `npm run bench`: the large
 * site collected once, then --replay and --replay --findings alternately.
 *
 *   npm run build && node --import tsx bench/findings-once.ts [runs] [factor]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { run, stat, withCollectedSite } from './harness.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
await withCollectedSite('findings', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const replay: number[] = [];
  const findings: number[] = [];
  for (let r = 0; r < runs; r++) {
    const a = join(workDir, `a-${r}`);
    replay.push((await run([BIN, '--replay', raw, '--out-dir', a, '--quiet'], { workDir })).ms);
    rmSync(a, { recursive: true, force: true });
    const b = join(workDir, `b-${r}`);
    findings.push((await run([BIN, '--replay', raw, '--out-dir', b, '--findings', '--quiet'], { workDir })).ms);
    const c = await run([BIN, 'findings', b, '--json'], { workDir });
    log(
      `round ${r + 1}: replay ${replay[r]!.toFixed(0)} ms, --findings ${findings[r]!.toFixed(0)} ms, findings <dir> ${c.ms.toFixed(0)} ms`,
    );
    rmSync(b, { recursive: true, force: true });
  }
  const rp = stat(replay)!.median;
  const fi = stat(findings)!.median;
  process.stdout.write(
    `${JSON.stringify({ factor, runs, replayMs: rp, findingsMs: fi, addedRatio: (fi - rp) / rp })}\n`,
  );
});
