import { lstat, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { UsageError, FailedError } from '../errors.js';
import type { ConvertSummary } from '../summaries/schemas.js';
import { removeDeadTempFiles } from '../publish/leftovers.js';
import { DIR_MODE } from '../publish/staging.js';
import { CONVERT_MEMORY } from '../exports/memory-policy.js';
import { stagingSink } from '../sheets/file-sink.js';
import { openSnapshot, SNAPSHOT_MANIFEST, type Snapshot } from '../snapshot/dir.js';
import { csvFileName, workbookFileName } from '../manifests.js';
import { writeSpreadsheets, type SheetFormat, type WrittenSheetFile } from '../sheets/write.js';
import { readOptions } from '../config/options.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';
import { assertSafeTarget, real } from '../publish/target.js';
import { escapeControl } from '../util/escape.js';

/** `svc-snapshot convert <snapshot-dir>` (docs/spreadsheets.md): the snapshot is only read; its files are published by rename. */
export async function runConvert(rawFlags: RawFlags, args: string[], deps: CommandDeps): Promise<CommandResult> {
  const flags = readOptions('convert', rawFlags, deps.env);
  const t0 = performance.now();
  const [given] = args;
  if (given === undefined || given === '')
    throw new UsageError('convert needs the snapshot directory: svc-snapshot convert <snapshot-dir> --format csv,xlsx');
  if ((flags.format as readonly string[]).includes('html'))
    throw new UsageError(
      'convert writes the spreadsheet forms (csv, xlsx); the report page is written by: svc-snapshot report ' +
        '<snapshot-dir>',
    );
  const formats = flags.format.filter((f) => f !== 'html');
  const include = flags.include;
  if (formats.length === 0)
    throw new UsageError(
      'convert writes csv and xlsx (json is the snapshot itself): give --format csv, xlsx or csv,xlsx',
    );
  if (flags.outDir === '')
    throw new UsageError(
      '--out-dir is empty (an unset variable?); give a directory, or leave it out to write into the snapshot',
    );
  // The files land beside what the directory holds: never the working directory, its parents or home.
  if (flags.outDir !== undefined)
    assertSafeTarget(
      flags.outDir,
      deps.cwd,
      undefined,
      'convert writes its files into it, so it must be a directory of its own, e.g. --out-dir ./svc-snapshot-sheets',
    );
  const dir = resolveOutDir(deps.cwd, given, given);
  if (flags.outDir !== undefined) await assertNotOtherSnapshot(flags.outDir, deps.cwd, dir);
  const snapshot = await openSnapshot(dir);
  const manifest = snapshot.manifest;
  // convert writes the forms of every export the snapshot holds; --include asks that it hold the group's (docs/decisions.md).
  const absent = include.filter((i) => !(manifest.include ?? []).includes(i));
  if (absent.length > 0) {
    throw new UsageError(
      `${dir} was taken without --include ${absent.join(',')}, so it holds none of those exports; take the snapshot ` +
        `again with --include ${absent.join(',')} (--replay <dir>/raw rebuilds it from its raw collection), or ` +
        `convert without --include`,
    );
  }
  const outDir = flags.outDir === undefined ? dir : resolveOutDir(deps.cwd, flags.outDir, flags.outDir);
  const created = outDir === dir ? undefined : await makeOutDir(outDir);
  deps.reporter.info(`converting ${dir} to ${formats.join(', ')} in ${outDir}`);
  // Only the names this convert writes: another file of that form in --out-dir is not ours to remove.
  const writes = new Set([...manifest.exports.map((e) => csvFileName(e.file)), workbookFileName(manifest.date)]);
  for (const line of removeDeadTempFiles(outDir, (n) => writes.has(n))) deps.reporter.warn(line);
  const files = await writeStaged(snapshot, formats, outDir, created);
  deps.reporter.close();
  const summary: ConvertSummary = {
    command: 'convert',
    snapshot: dir,
    outDir,
    date: manifest.date,
    files: files.map((f) => ({
      format: f.format,
      file: f.file,
      ...(f.export !== undefined ? { export: f.export } : {}),
    })),
    durationMs: Math.round(performance.now() - t0),
  };
  deps.stdout(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : formatConvertSummary(summary));
  return { exitCode: EXIT.ok };
}

/**
 * Refuses (exit 2) an --out-dir that is another snapshot (it holds a
 * `_snapshot-manifest.json`): the files written would replace those its
 * manifest lists, and its `verify` would fail. The snapshot being converted
 * is its own --out-dir, however it is spelled (real paths compared).
 */
async function assertNotOtherSnapshot(flagValue: string, cwd: string, dir: string): Promise<void> {
  const outDir = resolveOutDir(cwd, flagValue, flagValue);
  const manifest = await lstat(join(outDir, SNAPSHOT_MANIFEST)).catch(() => undefined);
  if (manifest === undefined || real(outDir) === real(dir)) return;
  throw new UsageError(
    `--out-dir "${escapeControl(flagValue)}" holds a _snapshot-manifest.json: it is another snapshot, and the ` +
      `files convert writes would replace those its manifest lists (its verify would then fail); nothing was ` +
      `written. Give a directory of its own, e.g. --out-dir ./svc-snapshot-sheets, or leave --out-dir out to write ` +
      `into ${escapeControl(dir)}`,
  );
}

/** --out-dir, made (0700) when missing: the first directory made, if any; a usage error when it is not a directory. */
async function makeOutDir(outDir: string): Promise<string | undefined> {
  const info = await stat(outDir).catch(() => undefined);
  if (info && !info.isDirectory()) throw new UsageError(`--out-dir ${outDir} exists and is not a directory`);
  if (info) return undefined;
  try {
    return await mkdir(outDir, { recursive: true, mode: DIR_MODE });
  } catch (err) {
    throw new FailedError(
      `cannot create ${outDir} (${(err as NodeJS.ErrnoException).code ?? 'error'}); choose another --out-dir`,
      { cause: err },
    );
  }
}

/**
 * The spreadsheets written into `outDir`, each by a temporary name, all
 * renamed once every export is read and checked (README.md, "Output"): a
 * failure or a signal leaves none of them, nor `created` (the first
 * directory made for --out-dir) with what it holds.
 */
async function writeStaged(
  snapshot: Snapshot,
  formats: readonly SheetFormat[],
  outDir: string,
  created: string | undefined,
): Promise<WrittenSheetFile[]> {
  if (created !== undefined) registerStaging(created);
  const staged = stagingSink(outDir);
  try {
    const files = await writeSpreadsheets(snapshot, formats, staged.sink, {
      beforeRead: CONVERT_MEMORY.beforeSheetRead,
    });
    await staged.commit();
    return files;
  } catch (err) {
    await staged.discard();
    if (created !== undefined) await rm(created, { recursive: true, force: true });
    throw err;
  } finally {
    if (created !== undefined) unregisterStaging(created);
  }
}

function formatConvertSummary(s: ConvertSummary): string {
  const lines = [`Spreadsheets of ${s.snapshot} written to ${s.outDir}`];
  for (const f of s.files) lines.push(`  ${f.format.padEnd(4)}  ${f.file}`);
  lines.push(`  done in ${(s.durationMs / 1000).toFixed(1)} s`);
  return `${lines.join('\n')}\n`;
}
