/**
 * Findings (CONTRACT section 17): the rules over a snapshot's exports.
 * `--findings` on `snapshot` writes FINDINGS_FILE into the staging directory
 * before the manifest; `svc-snapshot findings` evaluates an existing snapshot.
 */
import { UsageError } from '../errors.js';
import type { SnapshotManifest } from '../exports/manifest.js';
import { SEVERITIES, type Severity } from './define.js';
import { evaluateFindings, failsOn, serializeFindingsChunks, type FindingsReport } from './evaluate.js';
import { readExportRecords } from '../sheets/snapshot-dir.js';

export { findingCounts, serializeFindings, type FindingsReport } from './evaluate.js';
export { findingsOfDirectory } from './read.js';
export { formatFindings } from './format.js';

/** The file `--findings` adds to a snapshot directory (to be listed in the manifest's `files`). */
export const FINDINGS_FILE = '_findings.json';


/** On `snapshot`, --fail-on and --expiring-days mean something only with --findings. */
export function checkFindingsOptions(o: { readonly findings: boolean; readonly sources: Readonly<Record<string, string | undefined>> }): void {
  if (o.findings) return;
  for (const key of ['failOn', 'expiringDays']) {
    const from = o.sources[key];
    if (from !== undefined) throw new UsageError(`${from} needs --findings on a snapshot (or use svc-snapshot findings <snapshot-dir>)`);
  }
}

interface FindingsStaging {
  writeChunks(relPath: string, chunks: Iterable<string | Uint8Array>): Promise<void>;
}

/**
 * The findings of a snapshot being written (`--findings`, `--format html`):
 * the rules over the export files just written into its staging directory,
 * read back as the spreadsheets read them (their hashes computed while
 * writing) a few columns at a time, at the manifest's time, so that a
 * replay gives the live run's findings. `beforeRead` is the memory policy's
 * (the build's garbage collected first). Keeping the rules' columns as the
 * build yields them measured no faster (twice: the rules ran slower on the
 * build's records) and peaked higher, so the files are read.
 */
export function findingsOfStaging(dir: string, manifest: SnapshotManifest, expiringDays: number, beforeRead: () => void): Promise<FindingsReport> {
  beforeRead();
  return evaluateFindings(manifest, (name, columns) => readExportRecords(dir, manifest.exports.find((e) => e.export === name)!, { verify: false, columns }), { expiringDays });
}

/** `--findings`: FINDINGS_FILE written into the staging directory a chunk at a time, before the manifest that lists it. */
export async function writeFindingsFile(staging: FindingsStaging, report: FindingsReport): Promise<void> {
  await staging.writeChunks(FINDINGS_FILE, serializeFindingsChunks(report));
}

/** The warning a run prints when --fail-on is met (exit 6). */
export function failOnMessage(report: FindingsReport, failOn: Severity | undefined): string | undefined {
  if (!failsOn(report, failOn)) return undefined;
  const n = report.findings.filter((f) => SEVERITIES.indexOf(f.severity) <= SEVERITIES.indexOf(failOn!)).length;
  return `--fail-on ${failOn}: ${n} finding(s) of severity ${failOn} or higher (exit 6)`;
}

/** One line for the snapshot's progress output: the counts by severity, and the rules not evaluated. */
export function findingsLine(report: FindingsReport): string {
  const counts = SEVERITIES.map((s) => [s, report.findings.filter((f) => f.severity === s).length] as const).filter(([, n]) => n > 0);
  const skipped = report.rules.filter((r) => !r.evaluated).map((r) => r.id);
  const found = counts.length > 0 ? counts.map(([s, n]) => `${n} ${s}`).join(', ') : 'none';
  return `findings (${FINDINGS_FILE}): ${found}${skipped.length > 0 ? `; not evaluated: ${skipped.join(', ')}` : ''}`;
}
