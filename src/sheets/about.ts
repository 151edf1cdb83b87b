/**
 * The `About` sheet: what the workbook was made from, and everything the
 * manifest says about gaps (docs/spreadsheets.md), so that a reader of the
 * workbook alone knows which empty columns mean "unknown".
 */
import type { Cell } from './columns.js';
import type { ReadableManifest } from '../manifests.js';
import type { SheetSpec } from './xlsx.js';
import { cellWidth, fitWidth } from './xlsx.js';

export const ABOUT_SHEET = 'About';

/** The About sheet of a workbook whose export sheets are `sheets[export]`. */
export function aboutSheet(m: ReadableManifest, sheets: ReadonlyMap<string, readonly string[]>): SheetSpec {
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
  // Reasons and proposed routes sit in the same columns in every table, so one width fits them all.
  title('export', 'records', 'available', 'reason', 'proposed route', 'sheet', 'JSON file');
  for (const e of m.exports) {
    row(
      e.export,
      e.count,
      e.available,
      e.reason ?? null,
      e.proposedRoute ?? null,
      (sheets.get(e.export) ?? []).join(', '),
      e.file,
    );
  }
  row();
  title('Null columns', m.nullFields.length);
  if (m.nullFields.length > 0) title('export', 'column', null, 'reason', 'proposed route');
  for (const n of m.nullFields) row(n.export, n.field, null, n.reason, n.proposedRoute ?? null);
  row();
  title('Validation issues', m.validation.issues);
  if (m.validation.samples.length > 0) title('route', 'record', 'path', 'message');
  for (const s of m.validation.samples) row(s.route, s.index, s.path, s.message);
  row();
  title('Drift', m.drift.length, null, 'fields the backend returned that the models do not know');
  if (m.drift.length > 0) title('route', null, null, 'unknown fields');
  for (const d of m.drift) row(d.route, null, null, d.unknownFields.join('; '));

  const headers = ['Snapshot', ''];
  const columns = Math.max(headers.length, ...rows.map((r) => r.length));
  // The sentences of the first rows run on into the empty cells beside them: only the tables set the widths.
  const tables = rows.filter((r) => r.length > 2);
  const widths = Array.from({ length: columns }, (_, i) =>
    fitWidth(
      Math.max(
        i === 0 ? Math.max(...rows.map((r) => (r[0] === undefined ? 0 : cellWidth(r[0]!)))) : 0,
        ...tables.map((r) => (r[i] === undefined ? 0 : Math.min(50, cellWidth(r[i]!)))),
      ),
    ),
  );
  return { headers, widths, rows, rowCount: rows.length, table: false, boldRows: new Set([0, ...bold]) };
}
