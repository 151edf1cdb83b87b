/**
 * The archive and drill rows alone (bench/archive.ts), without the rest of
 * `npm run bench`: the large site collected once, then the section's rounds.
 *
 *   npm run build && node --import tsx bench/archive-once.ts [runs] [factor]
 */
import { benchArchive } from './archive.js';
import { met, run, stat, withCollectedSite } from './harness.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
await withCollectedSite('archive', factor, async ({ raw, workDir, bin, log }) => {
  const { rows } = await benchArchive({
    bin,
    workDir,
    runs,
    raw,
    run: (args, o) => run(args, o),
    runRss: (args, o) => run(args, { ...o, rss: true }),
    stat,
    log,
  });
  for (const r of rows) {
    const m = r.stat?.median;
    const shown = m === undefined ? '—' : `${m.toFixed(r.unit === 'MB' ? 1 : 0)} ${r.unit}`;
    const ratio = r.ratio === undefined ? '' : ` ${r.ratio.toFixed(2)} (${r.ratioOf})`;
    const target = r.target ? ` target ${r.target.op} ${r.target.value}: ${met(r) ? 'met' : 'NOT met'}` : '';
    process.stdout.write(`| ${r.figure} | ${shown} |${ratio}${target}\n`);
  }
});
