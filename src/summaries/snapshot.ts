/**
 * What `svc-snapshot snapshot` (and `history load`, for each snapshot it
 * loads) prints on stdout: one JSON object with --json (its schema:
 * SnapshotSummary in ./schemas.ts), else lines for a person.
 */
import type { RunReport } from '../cron/metrics.js';
import { findingCounts, unevaluatedRules } from '../findings/index.js';
import type { FindingsReport } from '../findings/evaluate.js';
import { countsText, nightCounts, type NightCounts } from '../findings/counts.js';
import { rerunText, type Rerun } from '../snapshot/beside.js';
import type { ChangeSet } from '../diff/index.js';
import { formatChangeSet } from '../diff/index.js';
import type { SnapshotManifest } from '../manifests.js';
import { SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import type { WrittenSheetFile } from '../sheets/write.js';
import { formatPruned } from '../cron/retention.js';
import { escapeControl } from '../util/escape.js';
import { summariseRoutes } from './routes.js';
import type { SnapshotSummary } from './schemas.js';

export interface SnapshotOutcome {
  outDir: string;
  manifest: SnapshotManifest;
  durationMs: number;
  /** With --diff-previous: the older snapshot (null when none) and the changes. */
  previous?: { dir: string | null; changes?: ChangeSet; names?: ReadonlyMap<string, string> };
  /** With --format csv or xlsx: the spreadsheet files published with the exports. */
  spreadsheets?: readonly WrittenSheetFile[];
  /** With --history: the load after publishing. */
  history?: { target: string; status: 'loaded' | 'already loaded' | 'failed'; error?: string };
  /** With --keep: the older snapshots deleted. */
  pruned?: string[];
  /** With --findings: the night's counts. */
  findings?: NightCounts;
  /** A night older than the newest of its site: its date, and the newer night's. */
  rerun?: Rerun;
  /** Problems in the configuration of what comes after publishing (the run exits 2). */
  problems?: readonly string[];
}

export function snapshotSummary(o: SnapshotOutcome): SnapshotSummary {
  const m = o.manifest;
  const routes = summariseRoutes(m.routes);
  return {
    command: 'snapshot' as const,
    outDir: o.outDir,
    source: m.source,
    baseUrl: m.baseUrl,
    date: m.date,
    complete: m.complete,
    exports: m.exports.map((e) => ({
      export: e.export,
      file: e.file,
      count: e.count,
      available: e.available,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      sha256: e.sha256,
      nullFields: m.nullFields.filter((n) => n.export === e.export).map((n) => n.field),
    })),
    routes: routes.counts,
    skipped: routes.skipped,
    failed: routes.failed,
    validation: { issues: m.validation.issues },
    drift: m.drift,
    ...(o.previous
      ? {
          diffPrevious: {
            previous: o.previous.dir,
            changed: o.previous.changes?.hasChanges ?? false,
            exports: (o.previous.changes?.exports ?? [])
              .filter((e) => e.hasChanges)
              .map((e) => ({
                export: e.export,
                added: e.counts.added,
                removed: e.counts.removed,
                changed: e.counts.changed,
                ...(e.availability === 'older-only' || e.availability === 'newer-only'
                  ? { note: `available only in ${e.availability === 'older-only' ? 'older' : 'newer'}` }
                  : {}),
              })),
          },
        }
      : {}),
    ...(o.spreadsheets
      ? {
          spreadsheets: o.spreadsheets.map((f) => ({
            format: f.format,
            file: f.file,
            ...(f.export !== undefined ? { export: f.export } : {}),
          })),
        }
      : {}),
    ...(o.history ? { history: o.history } : {}),
    ...(o.pruned ? { pruned: o.pruned } : {}),
    ...(o.findings ? { findings: o.findings } : {}),
    ...(o.rerun ? { rerun: o.rerun } : {}),
    ...(o.problems ? { problems: [...o.problems] } : {}),
    durationMs: o.durationMs,
  };
}

export function formatSnapshotSummary(o: SnapshotOutcome): string {
  const s = snapshotSummary(o);
  const width = Math.max(...s.exports.map((e) => e.export.length));
  const lines = [`Snapshot (${s.source}) of ${s.baseUrl} written to ${s.outDir}`];
  if (s.rerun) lines.push(`  ${rerunText(s.rerun)}`);
  for (const e of s.exports) {
    const name = e.export.padEnd(width);
    if (!e.available) lines.push(`  ${name}  unavailable: ${e.reason ?? ''}`);
    else
      lines.push(
        `  ${name}  ${String(e.count).padStart(7)}${e.nullFields.length ? `  null columns: ${e.nullFields.join(', ')}` : ''}`,
      );
  }
  lines.push(`  routes: ${s.routes.ok} read, ${s.routes.skipped} skipped, ${s.routes.failed} failed`);
  for (const r of s.failed) lines.push(`  FAILED ${r.route}: ${r.error}`);
  if (s.validation.issues > 0)
    lines.push(
      `  validation: ${s.validation.issues} issue${s.validation.issues === 1 ? '' : 's'} in the responses (see ` +
        `validation in ${SNAPSHOT_MANIFEST})`,
    );
  for (const d of s.drift)
    lines.push(`  drift: ${d.route} has unknown fields ${d.unknownFields.map(escapeControl).join(', ')}`);
  if (s.spreadsheets) {
    const csv = s.spreadsheets.filter((f) => f.format === 'csv').length;
    if (csv > 0) lines.push(`  csv: ${csv} files, one per export (<count>-<export> (<M>-<D>-<YYYY>).csv)`);
    for (const f of s.spreadsheets.filter((f) => f.format === 'xlsx')) lines.push(`  xlsx: ${f.file}`);
  }
  if (s.findings) lines.push(`  findings: ${countsText(s.findings)}`);
  if (s.history && s.history.status !== 'failed') lines.push(`  history: ${s.history.status} into ${s.history.target}`);
  if (!s.complete) lines.push('  INCOMPLETE: published with --allow-partial (exit 4)');
  for (const p of s.problems ?? []) lines.push(`  CONFIGURATION (exit 2): ${escapeControl(p)}`);
  lines.push(...formatPruned(s.pruned));
  lines.push(`  done in ${(s.durationMs / 1000).toFixed(1)} s`);
  let text = `${lines.join('\n')}\n`;
  if (o.previous?.changes)
    text += `\n${formatChangeSet(o.previous.changes, o.previous.names ? { names: o.previous.names } : {})}`;
  else if (o.previous) text += `\nNo older snapshot beside ${o.outDir} to compare with.\n`;
  return text;
}

/** The figures --metrics-file reports for a published snapshot, with its findings when it has them. */
export function snapshotRunReport(m: SnapshotManifest, findings: FindingsReport | undefined): RunReport {
  const routes = summariseRoutes(m.routes).counts;
  return {
    records: m.exports.map((e) => ({ export: e.export, count: e.count })),
    routes: { read: routes.ok, skipped: routes.skipped, failed: routes.failed },
    validationIssues: m.validation.issues,
    driftFields: m.drift.reduce((n, d) => n + d.unknownFields.length, 0),
    ...(findings
      ? {
          findings: findingCounts(findings),
          findingsUnevaluated: unevaluatedRules(findings),
          findingsByState: nightCounts(findings),
        }
      : {}),
  };
}
