import type { AlertRecord, AlertTypeMap, Severity } from './models.js';

export type SeverityOrUnknown = Severity | 'unknown';

interface AlertTypeCount {
  readonly type: string;
  /** From the alert-type map; null when the type is not in it. */
  readonly name: string | null;
  readonly severity: SeverityOrUnknown;
  readonly count: number;
}

export interface AlertSummary {
  readonly total: number;
  /** Every severity, most severe first; `unknown` counts alerts whose type is not in the map. */
  readonly bySeverity: Readonly<Record<SeverityOrUnknown, number>>;
  /** Most frequent first, then by type id. */
  readonly byType: readonly AlertTypeCount[];
}

export const SEVERITY_ORDER: readonly SeverityOrUnknown[] = ['critical', 'high', 'medium', 'low', 'info', 'unknown'];

export function summariseAlerts(alerts: readonly Pick<AlertRecord, 'type'>[], types: AlertTypeMap): AlertSummary {
  const bySeverity = Object.fromEntries(SEVERITY_ORDER.map((s) => [s, 0])) as Record<SeverityOrUnknown, number>;
  const byType = new Map<string, number>();
  for (const a of alerts) byType.set(a.type, (byType.get(a.type) ?? 0) + 1);
  const rows = [...byType].map(([type, count]): AlertTypeCount => {
    const t = Object.hasOwn(types, type) ? types[type] : undefined;
    return { type, name: t?.name ?? null, severity: t?.severity ?? 'unknown', count };
  });
  for (const r of rows) bySeverity[r.severity] += r.count;
  rows.sort((a, b) => b.count - a.count || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return { total: alerts.length, bySeverity, byType: rows };
}
