/**
 * The `About` sheet: what the workbook was made from, and everything the
 * manifest says about gaps (CONTRACT section 10), so that a reader of the
 * workbook alone knows which empty columns mean "unknown".
 */
import type { Cell } from './columns.js';
import type { SheetManifest } from './snapshot-dir.js';
import type { SheetSpec } from './xlsx.js';
import { cellWidth, fitWidth } from './xlsx.js';

export const ABOUT_SHEET = 'About';

/** The About sheet of a workbook whose export sheets are `sheets[export]`. */
export function aboutSheet(m: SheetManifest, sheets: ReadonlyMap<string, readonly string[]>): SheetSpec {
  const rows: Cell[][] = [];
  const bold = new Set<number>();
  const title = (...cells: Cell[]) => {
    bold.add(rows.length + 1);
    rows.push(cells);
  };
  const row = (...cells: Cell[]) => rows.push(cells);
  row('Base URL', m.baseUrl);
  row('Time (UTC)', m.time);
  row('Date', m.date);
  row('Source', m.source);
  row('Tool', `${m.tool.name} ${m.tool.version}`);
  row('Complete', m.complete);
  row('Timestamps', 'Every date-time cell is in UTC (the JSON exports hold epoch milliseconds).');
  row('Maps', 'Quota, storage and device maps have one column per key, named <column>.<key>.');
  row('Empty cells', 'null in the JSON export: absent, or not obtainable (see the null columns below).');
  row();
  title('Exports');
  title('export', 'sheet', 'records', 'available', 'reason', 'proposed route', 'JSON file');
  for (const e of m.exports) {
    row(e.export, (sheets.get(e.export) ?? []).join(', '), e.count, e.available, e.reason ?? null, e.proposedRoute ?? null, e.file);
  }
  row();
  title('Null columns', m.nullFields.length);
  if (m.nullFields.length > 0) title('export', 'column', 'reason', 'proposed route');
  for (const n of m.nullFields) row(n.export, n.field, n.reason, n.proposedRoute ?? null);
  row();
  title('Validation issues', m.validation.issues);
  if (m.validation.samples.length > 0) title('route', 'record', 'path', 'message');
  for (const s of m.validation.samples) row(s.route, s.index, s.path, s.message);
  row();
  title('Drift (fields the backend returned that the models do not know)', m.drift.length);
  if (m.drift.length > 0) title('route', 'unknown fields');
  for (const d of m.drift) row(d.route, d.unknownFields.join('; '));

  const headers = ['Snapshot', ''];
  const columns = Math.max(headers.length, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => fitWidth(Math.max(i === 0 ? 12 : 0, ...rows.map((r) => (r[i] === undefined ? 0 : cellWidth(r[i]!))))));
  return { headers, widths, rows, rowCount: rows.length, table: false, boldRows: new Set([0, ...bold]) };
}
