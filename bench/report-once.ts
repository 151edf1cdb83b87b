/**
 * The report's cost alone, as `npm run bench` measures it (bench/report.ts;
 * CONTRACT section 16, issue 37's budget: at most 0.3× a replay's time, a
 * page under 5 MB whatever the site): the large site collected once, a
 * second collection with DIFF_CHANGED_SHARE of its records changed replayed
 * as the night before; then --replay and --replay --format html (beside that
 * night, so the page holds its changes) alternately, and the page's size.
 * The figure with a 60-night history needs the history nights: `npm run
 * bench` measures it.
 *
 *   npm run build && node --import tsx bench/report-once.ts [runs] [factor]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, run, stat, withCollectedSite } from './harness.js';
import { nightBefore, reportPage } from './report.js';
import { DIFF_CHANGED_SHARE } from './workload.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
await withCollectedSite('report', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const mutated = join(workDir, 'raw-changed');
  const { changed, total } = JSON.parse(
    (await run([join(REPO_ROOT, 'bench', 'mutate.mjs'), raw, mutated, String(DIFF_CHANGED_SHARE)], { workDir })).stdout,
  ) as { changed: number; total: number };
  const ctx = await nightBefore(BIN, mutated, raw, join(workDir, 'nights'), workDir, run);
  log(`the night before: ${changed} of ${total} raw records changed`);
  const replay: number[] = [];
  const html: number[] = [];
  let pageBytes = 0;
  for (let r = 0; r < runs; r++) {
    const a = join(workDir, `a-${r}`);
    replay.push((await run([BIN, '--replay', raw, '--out-dir', a, '--quiet'], { workDir })).ms);
    rmSync(a, { recursive: true, force: true });
    const page = await reportPage(ctx, `${r}`);
    html.push(page.ms);
    pageBytes = page.pageBytes;
    log(
      `round ${r + 1}: replay ${replay[r]!.toFixed(0)} ms, --format html ${html[r]!.toFixed(0)} ms, page ${pageBytes} bytes`,
    );
  }
  const rp = stat(replay)!.median;
  const h = stat(html)!.median;
  process.stdout.write(
    `${JSON.stringify({ factor, runs, replayMs: rp, htmlMs: h, addedRatio: (h - rp) / rp, pageBytes })}\n`,
  );
});
