import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import { failOnMessage, findingsSettings, findingsOf, formatFindings, serializeFindings } from '../findings/index.js';
import { openSnapshot } from '../snapshot/dir.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

/**
 * `svc-snapshot findings <snapshot-dir>`: the rules of docs/findings.md over
 * an existing snapshot, which is only read (its export files checked against
 * the manifest's sha256). A text table, or with --json the object
 * `_findings.json` holds; --fail-on exits 6 when a finding of that severity
 * or higher exists, or a rule of that severity or higher was not evaluated
 * (unless --fail-on-unevaluated=false).
 */
export async function runFindings(rawFlags: RawFlags, args: string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('findings', rawFlags, deps.env);
  const [given] = args;
  if (given === undefined || given === '')
    throw new UsageError('findings needs the snapshot directory: svc-snapshot findings <snapshot-dir>');
  const dir = resolveOutDir(deps.cwd, given, given);
  const settings = findingsSettings(o);
  const report = await findingsOf(await openSnapshot(dir), {
    expiringDays: settings.expiringDays,
    inheritLevels: settings.inheritLevels,
  });
  for (const r of report.rules) if (!r.evaluated) deps.reporter.warn(`${r.id} not evaluated: ${r.reason ?? ''}`);
  deps.stdout(o.json ? serializeFindings(report) : formatFindings(report, dir));
  const failed = failOnMessage(report, settings.failOn);
  if (failed) deps.reporter.warn(failed);
  deps.reporter.close();
  return { exitCode: failed ? EXIT.findings : EXIT.ok };
}
