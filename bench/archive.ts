/**
 * Archives and restore drills on the large site (docs/archives.md): in
 * alternate rounds, `--replay --raw` with and without `--encrypt-to` (the
 * time and the peak memory the archive adds), `verify` of the snapshot and
 * `verify --identity` of its archive, and `verify --replay` of the snapshot.
 * Run inside `npm run bench`, or alone by bench/archive-once.ts.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
// Types only: harness.ts imports this module.
import type { Row, SectionContext, Stat } from './harness.js';

/** Budgets: the archive adds at most this share of a replay and this much peak memory; the verifies as said. */
export const ARCHIVE_TARGETS = {
  addedVsReplay: 0.5,
  addedPeakMB: 64,
  identityVsDir: 1.5,
  drillVsReplay: 1.3,
} as const;

/** Whether this build has `--encrypt-to` (src/archive). */
export function archiveSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'archive', 'write.js'));
}

export interface ArchiveBenchContext extends SectionContext {
  /** The harness's run with peak memory (its `rss` option). */
  runRss: (args: readonly string[], opts: { workDir: string }) => Promise<{ ms: number; maxRss?: number }>;
}

export async function benchArchive(c: ArchiveBenchContext): Promise<{ rows: Row[]; notes: string[] }> {
  const identity = await generateX25519Identity();
  const keyFile = join(c.workDir, 'archive-key.txt');
  writeFileSync(keyFile, `${identity}\n`, { mode: 0o600 });
  const recipient = await identityToRecipient(identity);
  const plain = join(c.workDir, 'archive-plain');
  const sealed = join(c.workDir, 'archive-sealed');
  const s = { replay: [] as number[], sealed: [] as number[], replayRss: [] as number[], sealedRss: [] as number[] };
  const v = { dir: [] as number[], identity: [] as number[], drill: [] as number[] };
  for (let r = 0; r < c.runs; r++) {
    const a = await c.runRss([c.bin, '--replay', c.raw, '--raw', '--out-dir', plain, '--quiet'], {
      workDir: c.workDir,
    });
    const b = await c.runRss(
      [c.bin, '--replay', c.raw, '--raw', '--out-dir', sealed, '--quiet', '--encrypt-to', recipient],
      { workDir: c.workDir },
    );
    s.replay.push(a.ms);
    s.sealed.push(b.ms);
    s.replayRss.push(a.maxRss ?? 0);
    s.sealedRss.push(b.maxRss ?? 0);
    v.dir.push((await c.run([c.bin, 'verify', sealed, '--quiet'], { workDir: c.workDir })).ms);
    v.identity.push(
      (await c.run([c.bin, 'verify', `${sealed}.tar.age`, '--identity', keyFile, '--quiet'], { workDir: c.workDir }))
        .ms,
    );
    v.drill.push((await c.run([c.bin, 'verify', plain, '--replay', '--quiet'], { workDir: c.workDir })).ms);
    c.log(`archive round ${r + 1} of ${c.runs}`);
  }
  for (const f of [plain, sealed, `${sealed}.tar.age`, keyFile]) rmSync(f, { recursive: true, force: true });
  return { rows: archiveRows(c, s, v), notes: archiveNotes() };
}

function archiveRows(
  c: Pick<SectionContext, 'stat'>,
  s: { replay: number[]; sealed: number[]; replayRss: number[]; sealedRss: number[] },
  v: { dir: number[]; identity: number[]; drill: number[] },
): Row[] {
  const mb = (xs: number[]) => xs.map((x) => x / 1e6);
  const rp = c.stat(s.replay);
  const se = c.stat(s.sealed);
  const rpRss = c.stat(mb(s.replayRss));
  const seRss = c.stat(mb(s.sealedRss));
  const vd = c.stat(v.dir);
  const vi = c.stat(v.identity);
  const dr = c.stat(v.drill);
  const ratio = (a: Stat | undefined, b: Stat | undefined) => (a && b ? a.median / b.median : undefined);
  return [
    { figure: 'Baseline: --replay --raw, beside the archive runs', unit: 'ms', stat: rp },
    {
      figure: '--replay --raw --encrypt-to (time added over --replay --raw)',
      unit: 'ms',
      stat: se,
      ratio: se && rp ? (se.median - rp.median) / rp.median : undefined,
      ratioOf: 'added ÷ --replay',
      target: { op: '≤', value: ARCHIVE_TARGETS.addedVsReplay },
    },
    { figure: 'Peak RSS, --replay --raw', unit: 'MB', stat: rpRss },
    {
      figure: 'Peak RSS, --replay --raw --encrypt-to (MB added over --replay --raw)',
      unit: 'MB',
      stat: seRss,
      ratio: seRss && rpRss ? seRss.median - rpRss.median : undefined,
      ratioOf: 'MB added',
      target: { op: '≤', value: ARCHIVE_TARGETS.addedPeakMB },
    },
    { figure: 'Baseline: verify of the snapshot directory (--raw)', unit: 'ms', stat: vd },
    {
      figure: 'verify --identity of its archive, decrypted as a stream',
      unit: 'ms',
      stat: vi,
      ratio: ratio(vi, vd),
      ratioOf: '÷ verify of the directory',
      target: { op: '≤', value: ARCHIVE_TARGETS.identityVsDir },
    },
    {
      figure: 'verify --replay of the snapshot (restore drill)',
      unit: 'ms',
      stat: dr,
      ratio: ratio(dr, rp),
      ratioOf: '÷ --replay --raw',
      target: { op: '≤', value: ARCHIVE_TARGETS.drillVsReplay },
    },
  ];
}

function archiveNotes(): string[] {
  return [
    'archive: one X25519 recipient; the archive holds the snapshot with its raw/ (about twice the collection). verify --replay checks every file too, then builds the exports again from raw/.',
  ];
}
