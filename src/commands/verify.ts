import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { EXIT } from '../exit-codes.js';
import type { VerifySummary } from '../summaries/schemas.js';
import { readOptions } from '../config/options.js';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { manifestsIn, verifyDir, WARNING_STATES, type DirReport } from '../verify/verify-dir.js';
import type { SignatureState } from '../sign/manifest-signature.js';
import type { OutputKind } from '../manifests.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

const ARCHIVE = '.tar.age';

type Target = { readonly dir: string; readonly kinds: OutputKind[] } | { readonly archive: string };

/** A directory given, or an archive (a file whose name ends in .tar.age); a usage error for anything else. */
async function targetOf(deps: CommandDeps, arg: string): Promise<Target> {
  const abs = resolveOutDir(deps.cwd, arg, arg);
  if (abs.endsWith(ARCHIVE) && !(await stat(abs).catch(() => undefined))?.isDirectory()) {
    const info = await stat(abs).catch(() => undefined);
    if (info === undefined)
      throw new UsageError(
        `${escapeControl(abs)} does not exist; give snapshot, collection or audit directories or archives`,
      );
    return { archive: abs };
  }
  return { dir: abs, kinds: await manifestsIn(abs) };
}

/** The part (0 … t-1) a directory or archive falls in: fixed by its base name, `.tar.age` removed, so both fall together. */
export function partOf(file: string, t: number): number {
  const name = path.basename(file).replace(/\.tar\.age$/, '');
  return createHash('sha256').update(name).digest().readUInt32BE(0) % t;
}

/**
 * `svc-snapshot verify <dir|archive>...` (docs/verify.md, docs/archives.md):
 * usage errors are refused before anything is read.
 */
export async function runVerify(flags: RawFlags, args: readonly string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('verify', flags, deps.env);
  if (args.length === 0)
    throw new UsageError('verify needs directories or archives: svc-snapshot verify <dir|archive>...');
  const allowed = o.allowedSigners;
  const sample = o.sample;
  const all: Target[] = [];
  for (const arg of args) all.push(await targetOf(deps, arg));
  const archives = all.some((t) => 'archive' in t);
  if (o.replay && archives && o.identity === undefined)
    throw new UsageError(
      'verify --replay of an archive needs its identity (--identity <file> or SVC_IDENTITY_FILE): the drill builds ' +
        'the exports from the raw/ inside it',
    );
  const identities =
    o.identity !== undefined && archives
      ? (await import('../archive/read.js')).readIdentities(o.identity, o.sources.identity ?? '--identity')
      : undefined;
  const targets = sample ? all.filter((t) => partOf(nameOf(t), sample.t) === sample.n - 1) : all;
  const now = deps.now();
  const reports: DirReport[] = [];
  for (const t of targets) {
    deps.reporter.info(`verifying ${nameOf(t)}`);
    reports.push(await verifyOne(t, { identities, allowed, now, replay: o.replay }));
  }
  deps.reporter.close();
  const summary: VerifySummary = {
    dirs: reports.map((r) => ({ ...r, files: [...r.files] })),
    ...(sample ? { sample: { ...sample, checked: targets.length, of: all.length } } : {}),
  };
  const text =
    formatVerify(reports) +
    (sample ? `sample ${sample.n}/${sample.t}: checked ${targets.length} of ${all.length}\n` : '');
  deps.stdout(o.json ? `${JSON.stringify(summary, null, 2)}\n` : text);
  return { exitCode: reports.every((r) => r.ok) ? EXIT.ok : EXIT.failed };
}

const nameOf = (t: Target) => ('archive' in t ? t.archive : t.dir);

interface VerifyOptions {
  readonly identities: readonly string[] | undefined;
  readonly allowed: Parameters<typeof verifyDir>[2];
  readonly now: Date;
  readonly replay: boolean;
}

async function verifyOne(t: Target, o: VerifyOptions): Promise<DirReport> {
  const report =
    'archive' in t
      ? await (await import('../archive/check.js')).verifyArchive(t.archive, o.identities, o.allowed, o.now)
      : await verifyDir(t.dir, t.kinds, o.allowed, o.now);
  if (!o.replay || report.error !== undefined) return report;
  const replay = await drill(t, report, o);
  return { ...report, ok: report.ok && replay.ok, replay };
}

/** verify --replay of one target whose checks could be made: the snapshot inside rebuilt from its raw/. */
async function drill(t: Target, report: DirReport, o: VerifyOptions): Promise<NonNullable<DirReport['replay']>> {
  const kind = report.kind === 'archive' ? report.contents : report.kind;
  if (kind !== 'snapshot')
    return {
      ok: false,
      exports: 0,
      error: `a ${kind ?? 'damaged output'} has no exports to build again; give snapshots`,
    };
  const { replayDir } = await import('../verify/replay.js');
  if (!('archive' in t)) return replayDir(t.dir);
  const { ArchiveProblem, withExtracted } = await import('../archive/read.js');
  try {
    return await withExtracted(t.archive, o.identities!, replayDir);
  } catch (err) {
    if (err instanceof ArchiveProblem) return { ok: false, exports: 0, error: err.message };
    throw err;
  }
}

function signedText(sig: SignatureState, what = ''): string {
  return sig.state === 'valid'
    ? `${what}signed by ${sig.key}${sig.reason ? ` (${sig.reason})` : ''}`
    : sig.state === 'unsigned'
      ? `${what}unsigned`
      : `${what}signature ${sig.state}`;
}

/** The first line of a report: what it is and whether it passed. */
function headOf(r: DirReport): string {
  const kind = r.kind === 'archive' ? (r.contents ? `archive of a ${r.contents}` : 'archive') : r.kind;
  return `${escapeControl(r.dir)}${kind ? ` (${kind})` : ''}: ${r.ok ? 'OK' : 'FAILED'}`;
}

function formatVerify(reports: readonly DirReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const checked = r.files.filter((f) => f.state === 'ok').length;
    const head = headOf(r);
    if (r.error !== undefined) {
      lines.push(`${head}: ${r.error}`);
      continue;
    }
    const sig = r.signature;
    if (r.archive && !r.archive.decrypted) {
      const n = r.archive.recipients ?? 0;
      lines.push(
        `${head}, a well-formed age file to ${n} recipient${n === 1 ? '' : 's'} (its MAC and contents are checked ` +
          `only with --identity), ${signedText(sig, 'archive ')}`,
      );
    } else {
      const manifest = r.manifestSignature ? `, ${signedText(r.manifestSignature, 'manifest ')}` : '';
      const archive = r.archive ? `, ${signedText(sig, 'archive ')}` : `, ${signedText(sig)}`;
      const decrypted = r.archive ? 'decrypted, ' : '';
      lines.push(
        `${head}, ${decrypted}${checked} file${checked === 1 ? '' : 's'} match the manifest${r.archive ? manifest : ''}${archive}`,
      );
    }
    const sizeless = r.files.filter((f) => f.state === 'ok' && f.detail !== undefined).length;
    if (sizeless > 0)
      lines.push(`  note: the manifest records no size for ${sizeless} of them (the exports); their sha256 matches`);
    for (const f of r.files) {
      if (f.state === 'ok') continue;
      const level = WARNING_STATES.has(f.state) ? 'warning' : 'FAILED';
      lines.push(`  ${level}: ${escapeControl(f.file)}: ${f.state}${f.detail ? ` (${f.detail})` : ''}`);
    }
    for (const s of [sig, r.manifestSignature])
      if (s && s.state !== 'valid' && s.reason !== undefined)
        lines.push(`  ${r.ok ? 'warning' : 'FAILED'}: signature: ${s.reason}`);
    if (r.replay) lines.push(`  ${replayLine(r.replay)}`);
  }
  return `${lines.join('\n')}\n`;
}

function replayLine(r: NonNullable<DirReport['replay']>): string {
  if (r.error !== undefined) return `FAILED: replay: ${r.error}`;
  if (r.ok) return `replay: ${r.exports} exports built again from raw/, each byte-identical to the published one`;
  const d = r.differs!;
  const key = d.key ? ` at record ${escapeControl(JSON.stringify(d.key))}` : '';
  return `FAILED: replay: ${escapeControl(d.export)} (${escapeControl(d.file)}) differs${key}: ${escapeControl(d.detail)}`;
}
