/**
 * The report's cost alone (CONTRACT section 16, issue 37's budget: at most
 * 0.3× a replay's time, a page under 5 MB whatever the site): the large site
 * collected once and replayed once as the night before; then --replay and
 * --replay --format html (beside that night, so the page holds the diff)
 * alternately, and the page's size.
 *
 *   npm run build && node --import tsx bench/report-once.ts [runs] [factor]
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, stat, withCollectedSite } from './harness.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
await withCollectedSite('report', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const nights = join(workDir, 'nights');
  mkdirSync(nights);
  // The night before: the same collection, said to be a day older (the diff then compares every record).
  const before = join(nights, 'svc-snapshot-0000-before');
  await run([BIN, '--replay', raw, '--out-dir', before, '--quiet'], { workDir });
  const manifest = join(before, '_snapshot-manifest.json');
  const m = JSON.parse(readFileSync(manifest, 'utf8')) as { time: string };
  writeFileSync(manifest, JSON.stringify({ ...m, time: new Date(Date.parse(m.time) - 86_400_000).toISOString() }));
  const replay: number[] = [];
  const html: number[] = [];
  let pageBytes = 0;
  for (let r = 0; r < runs; r++) {
    const a = join(workDir, `a-${r}`);
    replay.push((await run([BIN, '--replay', raw, '--out-dir', a, '--quiet'], { workDir })).ms);
    rmSync(a, { recursive: true, force: true });
    const b = join(nights, `svc-snapshot-${r}`);
    html.push((await run([BIN, '--replay', raw, '--out-dir', b, '--format', 'html', '--quiet'], { workDir })).ms);
    const page = JSON.parse(readFileSync(join(b, '_snapshot-manifest.json'), 'utf8')).files[0].name as string;
    pageBytes = statSync(join(b, page)).size;
    log(`round ${r + 1}: replay ${replay[r]!.toFixed(0)} ms, --format html ${html[r]!.toFixed(0)} ms, page ${pageBytes} bytes`);
    rmSync(b, { recursive: true, force: true });
  }
  const rp = stat(replay)!.median;
  const h = stat(html)!.median;
  process.stdout.write(`${JSON.stringify({ factor, runs, replayMs: rp, htmlMs: h, addedRatio: (h - rp) / rp, pageBytes })}\n`);
});
