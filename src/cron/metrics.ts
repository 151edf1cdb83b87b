import { randomBytes } from 'node:crypto';
import type { NightCounts } from '../findings/counts.js';
import { closeSync, constants, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readSmallFile } from '../util/safe-read.js';
import path from 'node:path';

/** What a run knew when it ended; absent parts are left out of the file rather than written as zeros. */
export interface RunReport {
  /** Records per export (snapshot). */
  readonly records?: ReadonlyArray<{ export: string; count: number }>;
  readonly routes?: { read: number; skipped: number; failed: number };
  readonly validationIssues?: number;
  readonly driftFields?: number;
  /** Findings per evaluated rule (snapshot with --findings); a rule that was not evaluated has no series. */
  readonly findings?: ReadonlyArray<{ rule: string; severity: string; count: number; waived?: number }>;
  /** The rules that could not be evaluated (snapshot with --findings): what --fail-on fails closed on, beside the findings. */
  readonly findingsUnevaluated?: ReadonlyArray<{ rule: string; severity: string }>;
  /** The night's counts (snapshot with --findings), as the summary and every other output give them. */
  readonly findingsByState?: NightCounts;
  /** Each notification target (--notify) by its sink name: 1 when it failed in this run, else 0. */
  readonly notifyFailures?: ReadonlyArray<{ sink: string; failed: number }>;
}

export interface MetricsInput {
  readonly command: string;
  /**
   * The `site` label of every series: the base URL the run is about, so that
   * two sites' files in one textfile directory never hold the same series.
   */
  readonly site: string;
  readonly exitCode: number;
  readonly endedAt: Date;
  readonly durationMs: number;
  /** Unix seconds of the last run that ended with exit 0, or undefined when none is known. */
  readonly lastSuccess: number | undefined;
  readonly report?: RunReport;
}

const HELP: Record<string, string> = {
  svc_snapshot_last_run_timestamp_seconds: 'When the last run ended, in Unix seconds, whatever its outcome.',
  svc_snapshot_last_success_timestamp_seconds:
    'When the last run that exited 0 (or 6: complete, with findings at ' +
    '--fail-on) ended, in Unix seconds (0: none known).',
  svc_snapshot_exit_code:
    'Exit code of the last run (0 complete, 1 failed, 2 usage, 3 token rejected, 4 incomplete, ' +
    '6 findings or rules not evaluated at --fail-on, 130/143 interrupted).',
  svc_snapshot_duration_seconds: 'Wall-clock duration of the last run.',
  svc_snapshot_records: 'Records written per export by the last run.',
  svc_snapshot_routes: 'Routes or requests of the last run by state.',
  svc_snapshot_validation_issues:
    'Validation issues in the responses of the last run (fields of the wrong type, records at odds with their route).',
  svc_snapshot_drift_fields: 'Field names the backend returned that the models do not know, in the last run.',
  svc_snapshot_findings:
    'Findings of the last run per evaluated rule and severity (snapshot --findings; docs/findings.md), waived ones not counted.',
  svc_snapshot_findings_waived:
    'Findings of the last run waived by the --waivers file, per evaluated rule and severity (docs/findings.md).',
  svc_snapshot_findings_by_state:
    'Findings of the last run by state (snapshot --findings; docs/night.md): new, open, resolved, waived, and active = new + open - waived.',
  svc_snapshot_findings_unevaluated:
    'Rules the last run could not evaluate (1 each), by rule and severity (snapshot ' +
    '--findings; the reason is in _findings.json).',
  svc_snapshot_notify_failures:
    'Notification targets (--notify) that could not be reached by the last run (1 each, 0 when sent), ' +
    'by sink: its kind and host.',
};

/** Label values escaped as the text exposition format requires. */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function seconds(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/** Pure: the file for node_exporter's textfile collector (Prometheus text format 0.0.4). */
export function renderMetrics(m: MetricsInput): string {
  const cmd = `command="${label(m.command)}",site="${label(m.site)}"`;
  const samples: Array<[string, string, string]> = [
    ['svc_snapshot_last_run_timestamp_seconds', cmd, seconds(m.endedAt.getTime())],
    ['svc_snapshot_last_success_timestamp_seconds', cmd, String(m.lastSuccess ?? 0)],
    ['svc_snapshot_exit_code', cmd, String(m.exitCode)],
    ['svc_snapshot_duration_seconds', cmd, seconds(m.durationMs)],
  ];
  const r = m.report;
  for (const e of r?.records ?? [])
    samples.push(['svc_snapshot_records', `${cmd},export="${label(e.export)}"`, String(e.count)]);
  if (r?.routes) {
    for (const state of ['read', 'skipped', 'failed'] as const)
      samples.push(['svc_snapshot_routes', `${cmd},state="${state}"`, String(r.routes[state])]);
  }
  if (r?.validationIssues !== undefined)
    samples.push(['svc_snapshot_validation_issues', cmd, String(r.validationIssues)]);
  if (r?.driftFields !== undefined) samples.push(['svc_snapshot_drift_fields', cmd, String(r.driftFields)]);
  const ruleLabels = (f: { rule: string; severity: string }) =>
    `${cmd},rule="${label(f.rule)}",severity="${label(f.severity)}"`;
  for (const f of r?.findings ?? []) samples.push(['svc_snapshot_findings', ruleLabels(f), String(f.count)]);
  for (const f of r?.findings ?? [])
    if (f.waived !== undefined) samples.push(['svc_snapshot_findings_waived', ruleLabels(f), String(f.waived)]);
  for (const f of r?.findingsUnevaluated ?? []) samples.push(['svc_snapshot_findings_unevaluated', ruleLabels(f), '1']);
  for (const [state, n] of Object.entries(r?.findingsByState ?? {}))
    samples.push(['svc_snapshot_findings_by_state', `${cmd},state="${state}"`, String(n)]);
  for (const n of r?.notifyFailures ?? [])
    samples.push(['svc_snapshot_notify_failures', `${cmd},sink="${label(n.sink)}"`, String(n.failed)]);
  const lines: string[] = [];
  let previous = '';
  for (const [name, labels, value] of samples) {
    if (name !== previous) lines.push(`# HELP ${name} ${HELP[name]}`, `# TYPE ${name} gauge`);
    previous = name;
    lines.push(`${name}{${labels}} ${value}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A previous file larger than this is not one of ours; it is ignored. */
const PREVIOUS_MAX_BYTES = 1024 * 1024;
/** Year 5138: anything later is garbage, not a time. */
const MAX_TIMESTAMP = 1e11;

/** The samples of `name` in a previous file (small, regular, not a link), each with its labels (values as written, escaped). */
function previousSamples(file: string, name: string): Array<{ labels: Map<string, string>; value: string }> {
  const text = readSmallRegularFile(file);
  if (text === undefined) return [];
  const out: Array<{ labels: Map<string, string>; value: string }> = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^{}\n]*)\}[ \t]+([0-9.eE+]+)[ \t]*$/.exec(line.trimEnd());
    if (!m || m[1] !== name) continue;
    const pairs = [...m[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g)].map(
      (l) => [l[1]!, l[2]!] as const,
    );
    const labels = new Map(pairs);
    // A label given twice is not a file this tool wrote.
    if (labels.size !== pairs.length) continue;
    out.push({ labels, value: m[3]! });
  }
  return out;
}

/**
 * The last success recorded for `command` (and `site`, when known) in the
 * previous file, so that it survives failed runs. The file may be missing, a
 * link, huge, garbled or hostile: anything but a well-formed sample for this
 * command gives undefined. A sample without a site label (a file written
 * before it) counts as this site's.
 */
export function readLastSuccess(file: string, command: string, site?: string): number | undefined {
  for (const s of previousSamples(file, 'svc_snapshot_last_success_timestamp_seconds')) {
    if (s.labels.get('command') !== label(command)) continue;
    if (site !== undefined && s.labels.has('site') && s.labels.get('site') !== label(site)) continue;
    const value = Number(s.value);
    if (Number.isFinite(value) && value > 0 && value < MAX_TIMESTAMP) return value;
  }
  return undefined;
}

/**
 * The site of the previous file's samples for `command`: a run that ends
 * before it knows its site (a usage error) keeps the file's series (one file
 * per command and site) rather than starting others.
 */
export function readPreviousSite(file: string, command: string): string | undefined {
  for (const s of previousSamples(file, 'svc_snapshot_last_run_timestamp_seconds')) {
    const site = s.labels.get('site');
    if (s.labels.get('command') !== label(command) || site === undefined) continue;
    // Unescaped as written by label(); a value that does not come back the same is not ours.
    const raw = site.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (label(raw) === site && raw.length <= 2048) return raw;
  }
  return undefined;
}

function readSmallRegularFile(file: string): string | undefined {
  try {
    const read = readSmallFile(file, { maxBytes: PREVIOUS_MAX_BYTES, followLinks: false });
    return Buffer.isBuffer(read) ? read.toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `text` to a new temporary file beside `file` and renames it over
 * `file`, so that the collector never reads half a file. The temporary name
 * does not end in `.prom`, which the collector ignores. Synchronous, so that a
 * signal handler can call it. Mode 0644: the collector usually runs as
 * another user, and the file holds only counts and times.
 */
export function writeMetricsFile(file: string, text: string): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    writeFileSync(fd, text, 'utf8');
    closeSync(fd);
    renameSync(temp, file);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
    try {
      unlinkSync(temp);
    } catch {
      // Nothing to remove.
    }
    throw err;
  }
}
