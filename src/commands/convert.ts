import { mkdir, stat } from 'node:fs/promises';
import { EXIT } from '../exit-codes.js';
import { UsageError, FailedError } from '../errors.js';
import type { ConvertSummary } from '../summaries/schemas.js';
import { DIR_MODE } from '../publish/staging.js';
import { CONVERT_MEMORY } from '../exports/memory-policy.js';
import { renamingSink } from '../sheets/file-sink.js';
import { openSnapshot } from '../snapshot/dir.js';
import { writeSpreadsheets } from '../sheets/write.js';
import { readOptions } from '../config/options.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { whenInterrupted } from '../publish/registry.js';
import { assertSafeTarget } from '../publish/target.js';

/** `svc-snapshot convert <snapshot-dir>` (docs/spreadsheets.md): the snapshot is only read; its files are written by rename. */
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
  // The files land beside what the directory holds: never the working directory, its parents or home (CONTRACT 6).
  if (flags.outDir !== undefined)
    assertSafeTarget(
      flags.outDir,
      deps.cwd,
      undefined,
      'convert writes its files into it, so it must be a directory of its own, e.g. --out-dir ./svc-snapshot-sheets',
    );
  const dir = resolveOutDir(deps.cwd, given, given);
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
  if (outDir !== dir) {
    const info = await stat(outDir).catch(() => undefined);
    if (info && !info.isDirectory()) throw new UsageError(`--out-dir ${outDir} exists and is not a directory`);
    if (!info) {
      try {
        await mkdir(outDir, { recursive: true, mode: DIR_MODE });
      } catch (err) {
        throw new FailedError(
          `cannot create ${outDir} (${(err as NodeJS.ErrnoException).code ?? 'error'}); choose another --out-dir`,
          { cause: err },
        );
      }
    }
  }
  deps.reporter.info(`converting ${dir} to ${formats.join(', ')} in ${outDir}`);
  // Each file is written by a temporary name and renamed: a signal removes the one in progress.
  whenInterrupted(`the files converted before it stay in ${outDir}; the one being written was removed`);
  const sink = renamingSink(outDir);
  const files = await writeSpreadsheets(snapshot, formats, sink, { beforeRead: CONVERT_MEMORY.beforeSheetRead });
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

function formatConvertSummary(s: ConvertSummary): string {
  const lines = [`Spreadsheets of ${s.snapshot} written to ${s.outDir}`];
  for (const f of s.files) lines.push(`  ${f.format.padEnd(4)}  ${f.file}`);
  lines.push(`  done in ${(s.durationMs / 1000).toFixed(1)} s`);
  return `${lines.join('\n')}\n`;
}
