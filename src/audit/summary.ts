import { SEVERITY_ORDER } from './alerts.js';
import { escapeControl } from '../util/escape.js';
import { formatPruned } from '../cron/retention.js';
import type { AuditSummary } from '../summaries/schemas.js';
import type { AuditManifest } from './collect.js';

/** What `svc-snapshot audit` prints on stdout; one JSON object with --json (schema in src/summaries/schemas.ts). */
export type { AuditSummary };

export function auditSummary(manifest: AuditManifest, outDir: string, files: number, durationMs: number): AuditSummary {
  return {
    command: 'audit',
    outDir,
    auditUrl: manifest.auditUrl,
    service: manifest.service,
    date: manifest.date,
    from: manifest.from,
    to: manifest.to,
    files,
    alerts: { ...manifest.alerts, byType: [...manifest.alerts.byType] },
    queries: manifest.queries.map((q) => ({ id: q.id, file: q.file, rows: q.rows })),
    reports: manifest.reports.map((r) => ({ id: r.id, objectId: r.objectId, file: r.file, bytes: r.bytes })),
    objects: manifest.objects.map((o) => ({
      type: o.type,
      ids: [...o.ids],
      file: o.file,
      count: o.count,
      bytes: o.bytes,
      sha256: o.sha256,
    })),
    validationIssues: manifest.validation.issues,
    durationMs,
  };
}

export function formatAuditSummary(s: AuditSummary): string {
  const a = s.alerts;
  const severities = SEVERITY_ORDER.filter((sev) => sev !== 'unknown' || a.bySeverity.unknown > 0)
    .map((sev) => `${sev} ${a.bySeverity[sev]}`)
    .join(', ');
  const lines = [
    `Audit collection written to ${s.outDir}`,
    `  service: ${escapeControl(s.service.name)} ${escapeControl(s.service.version)} at ${s.auditUrl}`,
    `  period: ${s.from} to ${s.to}; ${s.files} files (${(s.durationMs / 1000).toFixed(1)} s)`,
    `  alerts: ${a.total}${a.total > 0 ? ` (${severities})` : ''}`,
    ...a.byType.map(
      (t) =>
        `    ${String(t.count).padStart(5)}  ${escapeControl(t.type)}${t.name ? ` (${escapeControl(t.name)})` : ''}, ${t.severity}`,
    ),
    ...s.queries.map((q) => `  query ${q.id}: ${q.rows} row${q.rows === 1 ? '' : 's'} → ${q.file}`),
    ...s.reports.map(
      (r) => `  report ${r.id}${r.objectId !== null ? ` for ${r.objectId}` : ''}: ${r.bytes} bytes → ${r.file}`,
    ),
    // Ids are not echoed here (they are in the manifest): a count is enough, and prints no text from the command line back raw.
    ...s.objects.map(
      (o) =>
        `  objects ${o.type} ` +
        `(${o.ids.length === 0 ? 'all' : `${o.ids.length} id${o.ids.length === 1 ? '' : 's'} asked`}): ${o.count} → ` +
        `${o.file}`,
    ),
  ];
  if (s.validationIssues > 0)
    lines.push(
      `  ${s.validationIssues} record(s) did not have the documented shape; see validation in _audit-manifest.json`,
    );
  lines.push(...formatPruned(s.pruned));
  return `${lines.join('\n')}\n`;
}
