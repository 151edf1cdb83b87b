import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import {
  endedWaiverWarnings,
  failOnMessage,
  findingsSettings,
  findingsOf,
  formatFindings,
  overTime,
  serializeFindingsChunks,
  type FindingsReport,
  type FindingsSettings,
} from '../findings/index.js';
import { findingsCsvChunks } from '../findings/csv.js';
import { previousFindings } from '../findings/lifecycle.js';
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';
import { checkPrevious } from '../snapshot/beside.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

/** `--format` on findings: csv alone (the JSON form is --json), as typed: the parsed list leaves json out. */
function csvAsked(raw: unknown): boolean {
  if (raw === undefined) return false;
  if (String(raw).trim().toLowerCase() !== 'csv')
    throw new UsageError('findings --format takes csv (one row per finding); for JSON give --json');
  return true;
}

/** `svc-snapshot findings <snapshot-dir>` (docs/findings.md): the snapshot is only read. */
export async function runFindings(rawFlags: RawFlags, args: string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('findings', rawFlags, deps.env);
  const [given] = args;
  if (given === undefined || given === '')
    throw new UsageError('findings needs the snapshot directory: svc-snapshot findings <snapshot-dir>');
  if (o.previous === '')
    throw new UsageError(
      '--previous is empty (an unset variable?); give a snapshot directory, or leave it out to use the newest older ' +
        'one beside the snapshot',
    );
  const csv = csvAsked(rawFlags.format);
  if (csv && o.json) throw new UsageError('--format csv and --json both choose what findings prints; give one');
  const dir = resolveOutDir(deps.cwd, given, given);
  const settings = findingsSettings(o);
  const previous = o.previous !== undefined ? resolveOutDir(deps.cwd, o.previous, o.previous) : undefined;
  const snapshot = await openSnapshot(dir);
  if (previous !== undefined) await checkPrevious(snapshot, previous, (m) => deps.reporter.warn(m));
  const report = await findingsSince(snapshot, previous, settings, deps);
  for (const r of report.rules) if (!r.evaluated) deps.reporter.warn(`${r.id} not evaluated: ${r.reason ?? ''}`);
  for (const w of endedWaiverWarnings(report)) deps.reporter.warn(w);
  // A chunk at a time: the whole of a large site's report as one string would add its size to the peak, twice.
  if (csv || o.json)
    for (const chunk of csv ? findingsCsvChunks(report, true) : serializeFindingsChunks(report)) deps.stdout(chunk);
  else deps.stdout(formatFindings(report, dir));
  const failed = failOnMessage(report, settings.failOn);
  if (failed) deps.reporter.warn(failed);
  deps.reporter.close();
  return { exitCode: failed ? EXIT.findings : EXIT.ok };
}

/**
 * The rules over the snapshot, told against the night before (`previous`, else the newest older snapshot beside
 * it), with the waivers of `settings`.
 */
export async function findingsSince(
  snapshot: Snapshot,
  previous: string | undefined,
  settings: FindingsSettings,
  deps: CommandDeps,
): Promise<FindingsReport> {
  const opts = { expiringDays: settings.expiringDays, inheritLevels: settings.inheritLevels };
  const evaluated = await findingsOf(snapshot, opts);
  const lookup = {
    ...(previous !== undefined ? { given: previous } : {}),
    beside: { dir: snapshot.dir, time: evaluated.time, baseUrl: snapshot.manifest.baseUrl },
    warn: (m: string) => deps.reporter.warn(m),
  };
  return overTime(evaluated, await previousFindings(lookup, findingsOf, opts), settings);
}
