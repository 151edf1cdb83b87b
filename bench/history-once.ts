/**
 * The history rows alone, without the rest of `npm run bench`: the large
 * site collected once, then bench/history.ts as `npm run bench` runs it
 * (with the `--include vms` loads when this build has --include), its rows
 * printed as JSON lines: figure, median, min, max, ratio, target.
 *
 *   npm run build && node --import tsx bench/history-once.ts [runs] [factor] [nights]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, run, stat, withCollectedSite } from './harness.js';
import { benchHistory } from './history.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
const nights = process.argv[4] !== undefined ? Number(process.argv[4]) : undefined;
await withCollectedSite('history', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const includeVms = existsSync(join(REPO_ROOT, 'dist', 'includes.js'));
  const r = await benchHistory({
    bin: BIN,
    benchDir: join(REPO_ROOT, 'bench'),
    workDir,
    runs,
    raw,
    run: (args, o) => run(args, o),
    stat,
    log,
    includeVms,
    ...(nights !== undefined ? { nightCount: nights } : {}),
  });
  for (const row of r.rows) {
    const s = row.stat;
    process.stdout.write(
      `${JSON.stringify({ figure: row.figure, median: s?.median, min: s?.min, max: s?.max, samples: s?.samples, ratio: row.ratio, target: row.target && `${row.target.op} ${row.target.value}` })}\n`,
    );
  }
  for (const n of r.notes) log(n);
});
