/**
 * `svc-snapshot verify` against `sha256sum` over the same files (issue 32:
 * at most 1.2×): a snapshot of the bench's collection written with --raw
 * and --format csv,xlsx (so that every kind of file the manifest covers is
 * there), checked by each in alternate rounds; medians compared.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
// Types only: harness.ts imports this module.
import type { Row, SectionContext } from './harness.js';

export const VERIFY_TARGET = 1.2;

export type VerifyBenchContext = SectionContext;

/** The files `verify` reads: those the manifest names (exports, files, raw/). */
export function coveredFiles(dir: string): string[] {
  const m = JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as {
    exports: Array<{ file: string }>;
    files?: Array<{ name: string }>;
    routes: Array<{ file: string | null }>;
  };
  return [
    ...m.exports.map((e) => e.file),
    ...(m.files ?? []).map((f) => f.name),
    ...m.routes.flatMap((r) => (r.file ? [`raw/${r.file}`] : [])),
  ];
}

function timeSha256sum(dir: string, files: readonly string[]): number | undefined {
  const t0 = performance.now();
  const res = spawnSync('sha256sum', ['--', ...files], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  if (res.error || res.status !== 0) return undefined;
  return performance.now() - t0;
}

export async function benchVerify(c: VerifyBenchContext): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = join(c.workDir, 'verify-snapshot');
  await c.run([c.bin, '--replay', c.raw, '--out-dir', dir, '--raw', '--format', 'csv,xlsx', '--quiet'], {
    workDir: c.workDir,
  });
  const files = coveredFiles(dir);
  const sums: number[] = [];
  const verifies: number[] = [];
  for (let r = 0; r < c.runs; r++) {
    const s = timeSha256sum(dir, files);
    if (s === undefined) {
      rmSync(dir, { recursive: true, force: true });
      return { rows: [], notes: ['sha256sum is not available here: verify was not measured.'] };
    }
    sums.push(s);
    verifies.push((await c.run([c.bin, 'verify', dir, '--quiet'], { workDir: c.workDir })).ms);
  }
  rmSync(dir, { recursive: true, force: true });
  const base = c.stat(sums);
  const v = c.stat(verifies);
  c.log('verify measured');
  return {
    rows: [
      {
        figure: `Baseline: sha256sum of the snapshot's ${files.length} files (--raw --format csv,xlsx)`,
        unit: 'ms',
        stat: base,
      },
      {
        figure: 'svc-snapshot verify of the same snapshot',
        unit: 'ms',
        stat: v,
        ratio: v && base ? v.median / base.median : undefined,
        ratioOf: '÷ baseline',
        target: { op: '≤', value: VERIFY_TARGET },
      },
    ],
    notes: [
      'verify: both read every file the manifest names; verify also starts Node and checks the manifest and the directory listing.',
    ],
  };
}
