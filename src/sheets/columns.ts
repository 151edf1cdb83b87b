/**
 * How an export's columns appear in the spreadsheet forms
 * (docs/spreadsheets.md). A column is a timestamp when its model field is a
 * `ts()` schema (TIMESTAMPS), and a map when the catalog writes it `as: 'entries'`, never
 * by its name. A map becomes one column per key present in the export:
 * numbers where its model's values are numbers, so that a spreadsheet can
 * sum them, and texts, exactly as written, where they are texts (a running
 * VM's drives: device name = drive id).
 */
import { z } from 'zod';
import type { ColumnDef, ExportDef } from '../exports/define.js';
import { CATALOG, columnType } from '../exports/catalog.js';
import { recordValueOf, unwrap } from '../exports/schema.js';
import { compareValues } from '../exports/order.js';
import type { ExportRecord } from '../exports/types.js';

/** `timestamp`: epoch ms written as a date-time; `entries`: `"key=value"` strings, one column per key; `value`: as the JSON value's type says. */
export type CellType = 'timestamp' | 'entries' | 'value';

/** The cell type of a column, from the type the catalog declares for it (columnType). */
export function cellTypeOf(exp: ExportDef, col: ColumnDef): CellType {
  const t = columnType(exp, col);
  if (t.entries) return col.sheetAsList ? 'value' : 'entries';
  return t.timestamp ? 'timestamp' : 'value';
}

/**
 * Whether the model declares a map column's values as texts (a string or one
 * of some strings): its cells are then texts, never numbers, whatever they
 * look like (a drive id `1e3` is not a thousand).
 */
export function mapHoldsText(exp: ExportDef, col: ColumnDef): boolean {
  const t = columnType(exp, col);
  const values = t.entries ? recordValueOf(t.schema) : undefined;
  if (values === undefined) return false;
  const u = unwrap(values);
  return u instanceof z.ZodString || u instanceof z.ZodEnum;
}

/** Column name → cell type, per export, resolved once. */
const CELL_TYPES: ReadonlyMap<string, ReadonlyMap<string, CellType>> = new Map(
  CATALOG.map((exp) => [exp.name, new Map(exp.columns.map((c) => [c.name, cellTypeOf(exp, c)]))]),
);

/** The map columns whose values are texts (mapHoldsText), per export, resolved once. */
const TEXT_MAPS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  CATALOG.map((exp) => [exp.name, new Set(exp.columns.filter((c) => mapHoldsText(exp, c)).map((c) => c.name))]),
);

/**
 * Most columns one map column may become. The maps the catalog splits have
 * a handful of keys (storage and device types); one that a backend fills
 * with more is written as a list instead, as a file of another version is.
 */
export const MAX_KEY_COLUMNS = 256;

/** One column of a sheet or CSV file. */
export interface SheetColumn {
  readonly header: string;
  /** The export column it is read from. */
  readonly column: string;
  readonly type: CellType;
  /** For a map column: the key this column holds. */
  readonly key?: string;
  /** For a map column: its values are texts by the model, written as they are, never as numbers. */
  readonly text?: true;
}

/** A cell's value: null (empty), a number, a boolean, a text, or a date-time as epoch ms. */
export type Cell = null | number | boolean | string | { readonly ms: number };

/**
 * Splits `"key=value"` at the last `=`: the build writes the key first and
 * values are scalars, so a key may hold `=` and a numeric value never does.
 */
export function splitEntry(entry: string): { key: string; value: string } | undefined {
  const at = entry.lastIndexOf('=');
  return at < 0 ? undefined : { key: entry.slice(0, at), value: entry.slice(at + 1) };
}

function columnNames(name: string, records: readonly ExportRecord[]): string[] {
  // The catalog's order for an empty export; otherwise the file's own
  // columns (a snapshot of another version keeps its columns), in order of
  // first appearance.
  if (records.length === 0) return CATALOG.find((e) => e.name === name)?.columns.map((c) => c.name) ?? [];
  // A Set keeps its first insertion's order.
  const seen = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

function mapKeys(records: readonly ExportRecord[], column: string): string[] | undefined {
  const keys = new Set<string>();
  for (const r of records) {
    const v = r[column];
    if (v === null || v === undefined) continue;
    if (!Array.isArray(v)) return undefined;
    for (const e of v) {
      const kv = typeof e === 'string' ? splitEntry(e) : undefined;
      if (!kv) return undefined;
      keys.add(kv.key);
    }
  }
  // UTF-16 code unit order, as the build sorts map keys.
  return [...keys].sort(compareValues);
}

/**
 * The columns of an export's sheet: its columns in file order, each map
 * column replaced by one column per key found in the export
 * (`<column>.<key>`). A map column with no key in any record stays one empty
 * column, so that the header still names it; a map column whose values are
 * not `"key=value"` strings (a file of another version) is written as a list.
 */
export function sheetColumns(exportName: string, records: readonly ExportRecord[]): SheetColumn[] {
  const types = CELL_TYPES.get(exportName);
  const textMaps = TEXT_MAPS.get(exportName);
  const out: SheetColumn[] = [];
  for (const column of columnNames(exportName, records)) {
    const type = types?.get(column) ?? 'value';
    if (type !== 'entries') {
      out.push({ header: column, column, type });
      continue;
    }
    const keys = mapKeys(records, column);
    // More keys than a sheet should have columns for (a workbook holds 16,384): the map stays one list column.
    if (keys === undefined || keys.length > MAX_KEY_COLUMNS) out.push({ header: column, column, type: 'value' });
    else if (keys.length === 0) out.push({ header: column, column, type: 'entries' });
    else {
      const text = textMaps?.has(column) ? { text: true as const } : {};
      for (const key of keys) out.push({ header: `${column}.${key}`, column, type: 'entries', key, ...text });
    }
  }
  return out;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Largest epoch ms a JavaScript Date holds. */
const MAX_DATE_MS = 8.64e15;

function text(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}

/** The cell of `col` in `record`. */
export function cellOf(col: SheetColumn, record: ExportRecord): Cell {
  const v = record[col.column];
  if (v === null || v === undefined) return null;
  if (col.type === 'entries') {
    if (col.key === undefined || !Array.isArray(v)) return null;
    for (const e of v) {
      const kv = typeof e === 'string' ? splitEntry(e) : undefined;
      if (kv && kv.key === col.key)
        return !col.text && NUMBER.test(kv.value) && Number.isFinite(Number(kv.value)) ? Number(kv.value) : kv.value;
    }
    return null;
  }
  if (col.type === 'timestamp' && typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_DATE_MS)
    return { ms: v };
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map((e) => (e === null ? '' : text(e))).join('; ');
  // Exports are flat; a nested object can only come from a file of another version: kept as compact JSON text.
  return text(v);
}
