/**
 * `npm run bench`: the benchmark of a large site (bench/workload.ts), written
 * to bench/RESULTS.md and printed.
 *
 *   npm run bench                      # the full benchmark (5 runs, 1× and 2× site)
 *   npm run bench -- --runs 7
 *   npm run bench -- --quick           # a site a tenth as large, 3 runs: to iterate (bench/RESULTS.quick.md)
 *   npm run bench -- --factor 0.5 --no-doubled --out /tmp/r.md
 *   npm run bench -- --bin ../other-build/bin/svc-snapshot.js --out /tmp/r.md   # measure another build
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, met, renderResults, runBench } from './harness.js';
import { MIN_RUNS } from './workload.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    quick: { type: 'boolean', default: false },
    factor: { type: 'string' },
    'no-doubled': { type: 'boolean', default: false },
    out: { type: 'string' },
    bin: { type: 'string' },
  },
  strict: true,
});

const quick = values.quick;
const runs = values.runs !== undefined ? Number(values.runs) : quick ? 3 : MIN_RUNS;
const factor = values.factor !== undefined ? Number(values.factor) : quick ? 0.1 : 1;
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs is a whole number ≥ 1');
if (!(factor > 0)) throw new Error('--factor is a number > 0');
if (!quick && factor === 1 && runs < MIN_RUNS) process.stderr.write(`bench: fewer than ${MIN_RUNS} runs: medians are not the benchmark's\n`);

const results = await runBench({
  runs,
  factor,
  doubled: !values['no-doubled'],
  ...(values.bin !== undefined ? { bin: values.bin } : {}),
  log: (l) => process.stderr.write(`bench: ${l}\n`),
});
const markdown = renderResults(results);
const out = values.out ?? join(REPO_ROOT, 'bench', quick || factor !== 1 || values.bin !== undefined ? 'RESULTS.quick.md' : 'RESULTS.md');
writeFileSync(out, markdown);
process.stdout.write(markdown);
process.stderr.write(`bench: written to ${out}\n`);
const unmet = results.rows.filter((r) => met(r) === false);
if (unmet.length > 0) process.stderr.write(`bench: ${unmet.length} target(s) not met: ${unmet.map((r) => r.figure).join('; ')}\n`);
