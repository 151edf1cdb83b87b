/**
 * Findings (docs/findings.md): the rules over a snapshot's exports.
 * `--findings` on `snapshot` writes FINDINGS_FILE into the staging directory
 * before the manifest; `svc-snapshot findings` evaluates an existing snapshot.
 */
import { escapeControl } from '../util/escape.js';
import { countsText, nightCounts } from './counts.js';
import { UsageError } from '../errors.js';
import type { Snapshot } from '../snapshot/dir.js';
import { applyLifecycle, type PreviousFindings } from './lifecycle.js';
import { FINDINGS_FILE_NAME as FINDINGS_FILE } from './names.js';
import { applyWaivers, checkWaiverDates, loadWaivers, type WaiversFile } from './waivers.js';
import { SEVERITIES, type Severity } from './define.js';
import {
  evaluateFindings,
  failing,
  serializeFindingsChunks,
  type EvaluateOptions,
  type FailOn,
  type FindingsReport,
} from './evaluate.js';

export {
  findingCounts,
  serializeFindingsChunks,
  unevaluatedRules,
  type FailOn,
  type FindingsReport,
} from './evaluate.js';
export { formatFindings } from './format.js';

export { FINDINGS_FILE_NAME as FINDINGS_FILE, FINDINGS_CSV_NAME as FINDINGS_CSV } from './names.js';

/** What a command that evaluates the findings was asked for, parsed before anything is read or published. */
export interface FindingsSettings {
  readonly failOn: FailOn;
  readonly expiringDays: number;
  /** --findings-inherit-levels (default) or --no-findings-inherit-levels. */
  readonly inheritLevels: boolean;
  /** --waivers / SVC_WAIVERS, read and checked whole. */
  readonly waivers?: WaiversFile;
}

interface FindingsOptions {
  readonly failOn?: Severity | undefined;
  readonly failOnUnevaluated?: boolean;
  readonly expiringDays: number;
  readonly findingsInheritLevels: boolean;
  readonly waivers: string | undefined;
  readonly waiversMaxDays: number;
  readonly sources: Readonly<Record<string, string | undefined>>;
}

/**
 * The settings of `findings` (and of a snapshot with --findings), every value
 * parsed now: a bad one is a usage error (exit 2) before anything is read,
 * never after a snapshot was published. --fail-on-unevaluated changes what
 * --fail-on fails on: alone it would do nothing, which a job would not notice.
 */
export function findingsSettings(o: FindingsOptions, now: () => number = Date.now): FindingsSettings {
  const from = o.sources.failOnUnevaluated;
  if (from !== undefined && o.sources.failOn === undefined) {
    throw new UsageError(`${from} changes what --fail-on <severity> fails on; give --fail-on too, or drop ${from}`);
  }
  let waivers: WaiversFile | undefined;
  if (o.waivers !== undefined) {
    const source = o.sources.waivers ?? '--waivers';
    waivers = loadWaivers(o.waivers, source);
    checkWaiverDates(waivers, o.waiversMaxDays, now(), source);
  }
  return {
    failOn: { severity: o.failOn, unevaluated: o.failOnUnevaluated ?? true },
    expiringDays: o.expiringDays,
    inheritLevels: o.findingsInheritLevels,
    ...(waivers ? { waivers } : {}),
  };
}

/**
 * On `snapshot`, --fail-on, --fail-on-unevaluated and --expiring-days mean
 * something only with --findings; the reading of the levels, wherever
 * findings are evaluated (--findings, or --format html's page).
 */
function checkFindingsOptions(o: FindingsOptions & { readonly findings: boolean }, html: boolean): FindingsSettings {
  if (!o.findings) {
    const findingsOnly = ['failOn', 'failOnUnevaluated', 'expiringDays'];
    for (const key of [...findingsOnly, ...(html ? [] : ['findingsInheritLevels', 'waivers', 'waiversMaxDays'])]) {
      const from = o.sources[key];
      if (from !== undefined)
        throw new UsageError(
          `${from} needs --findings on a snapshot${findingsOnly.includes(key) ? '' : ' (or --format html)'} (or ` +
            `use svc-snapshot findings <snapshot-dir>)`,
        );
    }
  }
  return findingsSettings(o);
}

interface FindingsStaging {
  writeChunks(relPath: string, chunks: Iterable<string | Uint8Array>): Promise<void>;
}

/**
 * The findings of a snapshot: the rules over its export files, a few
 * columns at a time, at the manifest's time (so that a replay gives the live
 * run's findings), and every other export file checked too, so that a
 * directory whose exports were edited is refused whole (exit 1), as
 * `verify` refuses it. A snapshot being written (`--findings`, `--format
 * html`) reads back the files just written into its staging directory (no
 * slower than keeping the build's records, and lower in memory).
 */
export async function findingsOf(snapshot: Snapshot, opts: EvaluateOptions): Promise<FindingsReport> {
  // evaluateFindings loads only exports the manifest lists as available.
  const report = await evaluateFindings(
    snapshot.manifest,
    (name, columns) => snapshot.records(snapshot.entry(name)!, columns),
    opts,
  );
  await snapshot.checkRest();
  return report;
}

/**
 * The findings over time (docs/findings.md): each one's state against the
 * previous night's, when there is one, and the waivers, when given, at the
 * snapshot's time.
 */
export function overTime(
  report: FindingsReport,
  previous: PreviousFindings | undefined,
  settings: Pick<FindingsSettings, 'waivers' | 'expiringDays'>,
): FindingsReport {
  let out = previous ? applyLifecycle(report, previous) : report;
  if (settings.waivers) {
    const { findings, carried, summary } = applyWaivers(
      out.findings,
      settings.waivers,
      Date.parse(out.time),
      settings.expiringDays,
      new Set(out.rules.filter((r) => !r.evaluated).map((r) => r.id)),
      out.carried,
    );
    out = { ...out, waivers: summary, findings, ...(out.carried ? { carried } : {}) };
  }
  return out;
}

/** `--findings`: FINDINGS_FILE written into the staging directory a chunk at a time, before the manifest that lists it. */
export async function writeFindingsFile(staging: FindingsStaging, report: FindingsReport): Promise<void> {
  await staging.writeChunks(FINDINGS_FILE, serializeFindingsChunks(report));
}

/** Rules not evaluated as the warning names them: each id with its reason, the first few only. */
const NAMED_RULES = 5;

/**
 * The warning a run prints when --fail-on is met (exit 6): the findings, and the rules that could not be
 * evaluated and why (the reporter escapes it for the terminal).
 */
export function failOnMessage(report: FindingsReport, failOn: FailOn): string | undefined {
  const { findings, unevaluated } = failing(report, failOn);
  if (findings === 0 && unevaluated.length === 0) return undefined;
  const s = failOn.severity!;
  const parts: string[] = [];
  if (findings > 0) parts.push(`${findings} finding(s) of severity ${s} or higher`);
  if (unevaluated.length > 0) {
    const named = unevaluated.slice(0, NAMED_RULES).map((r) => `${r.id} (${r.reason})`);
    const more = unevaluated.length > NAMED_RULES ? `, and ${unevaluated.length - NAMED_RULES} more` : '';
    parts.push(
      `${unevaluated.length} rule(s) of severity ${s} or higher not evaluated, so not checked: ` +
        `${named.join('; ')}${more}; --fail-on-unevaluated=false fails on findings alone`,
    );
  }
  return `--fail-on ${s}: ${parts.join('; and ')} (exit 6)`;
}

/** One line for the snapshot's progress output: the counts by severity, and the rules not evaluated. */
export function findingsLine(report: FindingsReport): string {
  const counts = SEVERITIES.map((s) => [s, report.findings.filter((f) => f.severity === s).length] as const).filter(
    ([, n]) => n > 0,
  );
  const skipped = report.rules.filter((r) => !r.evaluated).map((r) => r.id);
  const found =
    counts.length > 0
      ? `${countsText(nightCounts(report))} (${counts.map(([s, n]) => `${n} ${s}`).join(', ')})`
      : 'none';
  return `findings (${FINDINGS_FILE}): ${found}${skipped.length > 0 ? `; not evaluated: ${skipped.join(', ')}` : ''}`;
}

/**
 * The waivers file concerns only what comes after publishing: a problem in
 * it is printed and costs a line (exit 2 at the end), not the night's
 * snapshot, which is told without the file. Any other option's problem is a
 * usage error before anything is collected.
 */
export function snapshotFindingsSettings(o: FindingsOptions & { readonly findings: boolean }, html: boolean) {
  try {
    return { findingsAsked: checkFindingsOptions(o, html), problems: [] as string[] };
  } catch (err) {
    if (!(err instanceof UsageError) || o.waivers === undefined) throw err;
    const without = { ...o, waivers: undefined, sources: { ...o.sources, waivers: undefined } };
    return { findingsAsked: checkFindingsOptions(without, html), problems: [err.message] };
  }
}

/** A warning for each waiver of the file that ended before the snapshot's time: its findings count again. */
export function endedWaiverWarnings(report: FindingsReport): string[] {
  return (report.waivers?.ended ?? []).map(
    (w) =>
      `waiver on line ${w.line} (${escapeControl(w.rule)}, ${escapeControl(w.owner)}) ended ${escapeControl(w.expires)}: ` +
      'its findings count again; renew it or remove it from the waivers file',
  );
}
