import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';
import { reportFileName } from '../manifests.js';
import { checkPrevious, previousSnapshotBeside } from '../snapshot/beside.js';
import { rerunOf } from '../night/index.js';
import { real } from '../publish/target.js';
import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import { trustStore } from '../config/values.js';
import { findingsSettings } from '../findings/index.js';
import { parseHistoryTarget } from '../history/target.js';
import { modelOfDirectory, renderReport, type HistorySource } from '../report/index.js';
import { removeDeadTempFiles } from '../publish/leftovers.js';
import { renamingSink } from '../sheets/file-sink.js';
import { whenInterrupted } from '../publish/registry.js';
import type { ReportSummary } from '../summaries/schemas.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

/** `svc-snapshot report <snapshot-dir>` (README.md, "The report"): the snapshot is only read; the page is written by rename, mode 0600. */
export async function runReport(rawFlags: RawFlags, args: string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('report', rawFlags, deps.env);
  const [given] = args;
  if (given === undefined || given === '')
    throw new UsageError(
      'report needs the snapshot directory: svc-snapshot report <snapshot-dir> [--previous <dir>] [--history [target]] ' +
        '[--out <file>]',
    );
  if (o.out === '')
    throw new UsageError(
      '--out is empty (an unset variable?); give a file name, or leave it out to write into the snapshot',
    );
  if (o.previous === '')
    throw new UsageError(
      '--previous is empty (an unset variable?); give a snapshot directory, or leave it out to use the newest older ' +
        'one beside the snapshot',
    );
  const dir = resolveOutDir(deps.cwd, given, given);
  const target = o.history !== undefined ? parseHistoryTarget(o.history, deps.cwd) : undefined;
  const history: HistorySource | undefined = target
    ? { target, ...(target.engine === 'postgres' ? { ca: trustStore(o.caFile, deps.env) } : {}) }
    : undefined;
  const findings = findingsSettings(o);
  const outFile = o.out !== undefined ? resolveOutDir(deps.cwd, o.out, o.out) : undefined;
  if (outFile !== undefined && (await stat(outFile).catch(() => undefined))?.isDirectory()) {
    throw new UsageError(`--out ${outFile} is a directory; give the file to write`);
  }
  deps.reporter.info(`reading ${dir}`);
  const snapshot = await openSnapshot(dir);
  const previous = o.previous !== undefined ? resolveOutDir(deps.cwd, o.previous, o.previous) : undefined;
  if (previous !== undefined) await checkPrevious(snapshot, previous, (m) => deps.reporter.warn(m));
  const file = outFile ?? resolveOutDir(dir, reportFileName(snapshot.manifest.date), '');
  await refuseOwnFile(snapshot, file, outFile !== undefined);
  const model = await modelOfDirectory(snapshot, {
    inheritLevels: o.findingsInheritLevels,
    expiringDays: findings.expiringDays,
    ...(findings.waivers ? { waivers: findings.waivers } : {}),
    warn: (m) => deps.reporter.warn(m),
    ...(previous !== undefined ? { previous } : {}),
    ...(history ? { history } : {}),
  });
  const m = snapshot.manifest;
  const rerun = await rerunOf(await previousSnapshotBeside(dir, m), m, history, (w) => deps.reporter.warn(w));
  const page = renderReport(rerun ? { ...model, rerun } : model);
  // As convert writes into a published snapshot: a temporary name (0600, removed by a signal), then a rename.
  whenInterrupted(`${file} was not written`);
  for (const line of removeDeadTempFiles(dirname(file), (n) => n === basename(file))) deps.reporter.warn(line);
  await renamingSink(dirname(file))(basename(file), [page]);
  deps.reporter.close();
  const summary: ReportSummary = { command: 'report', snapshot: dir, file, bytes: Buffer.byteLength(page) };
  deps.stdout(o.json ? `${JSON.stringify(summary, null, 2)}\n` : `Report of ${dir} written to ${file}\n`);
  return { exitCode: EXIT.ok };
}

/**
 * The page must not replace a file of the snapshot: its manifest, the
 * signature, a file the manifest lists (verified and signed with it; the
 * page `--format html` wrote is one), which would make `verify` fail, or a
 * spreadsheet form `convert` wrote. Only the report page itself may be
 * written there (the default) and replaced by the next report.
 */
async function refuseOwnFile(snapshot: Snapshot, file: string, given: boolean): Promise<void> {
  if (real(dirname(file)) !== real(snapshot.dir)) return;
  const { own, listed, later } = snapshot.files();
  const name = basename(file);
  if (listed.some((f) => f.name === name) || own.includes(name))
    throw new UsageError(
      given
        ? `--out ${file} is a file of the snapshot ${snapshot.dir} (its manifest lists it); give another file`
        : `${file} is the snapshot's own report, listed in its manifest (verified and signed with it); ` +
            'give --out <file> to write the new one elsewhere',
    );
  if (later.includes(name) && name !== reportFileName(snapshot.manifest.date))
    throw new UsageError(
      `--out ${file} is a file of the snapshot ${snapshot.dir} (a spreadsheet form convert writes); give another file`,
    );
}
