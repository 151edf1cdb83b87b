/**
 * A change against the build before, as whole commands (docs/performance.md,
 * "A change against the build before"): two builds' binaries run in turn,
 * A B A B …, each on its own fresh output, and the ratio A/B of wall time,
 * CPU time (user + system, every thread) and peak RSS taken pair by pair, so
 * that the machine's drift during the runs weighs on both alike. Prints the
 * median, min and max of each; with --busy, two busy loops keep both cores
 * busy meanwhile.
 *
 *   node --import tsx bench/ab.ts --a <bin A> --b <bin B> [--runs 10] [--busy] [--beside <dir>] -- <args…>
 *
 * In <args> (paths absolute: each build runs in a directory of its own),
 * `{out}` is replaced by a new directory for each run (removed after it);
 * with --beside, that directory is made beside a copy of <dir> (each build
 * has its own copy), as the report's previous night must be.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { run, stat } from './harness.js';

const { values, positionals } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    runs: { type: 'string', default: '10' },
    busy: { type: 'boolean', default: false },
    beside: { type: 'string' },
  },
  allowPositionals: true,
  strict: true,
});
const runs = Number(values.runs);
if (values.a === undefined || values.b === undefined || positionals.length === 0)
  throw new Error('usage: bench/ab.ts --a <bin> --b <bin> [--runs n] [--busy] [--beside dir] -- <args…>');
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs is a whole number ≥ 1');
const work = mkdtempSync(join(tmpdir(), 'svc-ab-'));
const sides = { a: resolve(values.a), b: resolve(values.b) } as const;
const busy = values.busy ? [0, 1].map(() => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' })) : [];
const samples = {
  a: [] as Array<{ ms: number; cpu: number; rss: number }>,
  b: [] as Array<{ ms: number; cpu: number; rss: number }>,
};
try {
  for (const side of ['a', 'b'] as const) {
    mkdirSync(join(work, side));
    if (values.beside !== undefined)
      cpSync(resolve(values.beside), join(work, side, basename(values.beside)), { recursive: true });
  }
  // One run of each first, not counted: the page cache and the binaries warm.
  for (let r = -1; r < runs; r++) {
    for (const side of ['a', 'b'] as const) {
      const out = join(work, side, `svc-snapshot-run-${r + 1}`);
      const res = await run([sides[side], ...positionals.map((p) => p.replaceAll('{out}', out))], {
        rss: true,
        ok: [0, 5],
        workDir: join(work, side),
      });
      rmSync(out, { recursive: true, force: true });
      if (r >= 0) samples[side].push({ ms: res.ms, cpu: res.cpuMs!, rss: res.maxRss! });
    }
  }
} finally {
  for (const p of busy) p.kill();
  rmSync(work, { recursive: true, force: true });
}
const line = (name: string, xs: number[], digits: number) => {
  const s = stat(xs)!;
  return `${name.padEnd(14)} median ${s.median.toFixed(digits)}  min ${s.min.toFixed(digits)}  max ${s.max.toFixed(digits)}`;
};
const ratios = (k: 'ms' | 'cpu' | 'rss') => samples.a.map((x, i) => x[k] / samples.b[i]![k]);
process.stdout.write(
  [
    `${runs} pair${runs === 1 ? '' : 's'}${values.busy ? ', two busy loops' : ''}`,
    line(
      'A wall ms',
      samples.a.map((x) => x.ms),
      0,
    ),
    line(
      'B wall ms',
      samples.b.map((x) => x.ms),
      0,
    ),
    line('A/B wall', ratios('ms'), 3),
    line('A/B CPU', ratios('cpu'), 3),
    line(
      'A peak MB',
      samples.a.map((x) => x.rss / 1e6),
      1,
    ),
    line(
      'B peak MB',
      samples.b.map((x) => x.rss / 1e6),
      1,
    ),
  ].join('\n') + '\n',
);
