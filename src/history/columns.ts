/**
 * The SQL type of every export column in the history database (the table
 * of types in docs/history.md), derived from the export
 * catalog's declarations and the models they read, never from names: an
 * export added to the catalog gets typed columns without code here.
 */
import type { ValueKind } from '../exports/catalog.js';
import type { ExportRecord } from '../exports/types.js';
import { quoteIdent } from './engine.js';

export type ColumnType = ValueKind;

export interface TypedColumn {
  readonly name: string;
  readonly type: ColumnType;
  /** Epoch milliseconds: the view of current records adds `<name>_utc`. */
  readonly timestamp: boolean;
}

/** The column's SQL type in each engine; SQLite keeps booleans as 0/1, checked. */
export function sqlType(engine: 'sqlite' | 'postgres', c: TypedColumn): string {
  if (engine === 'postgres')
    return { integer: 'BIGINT', real: 'DOUBLE PRECISION', boolean: 'BOOLEAN', text: 'TEXT' }[c.type];
  if (c.type === 'boolean') return `INTEGER CHECK (${quoteIdent(c.name)} IN (0, 1))`;
  return { integer: 'INTEGER', real: 'REAL', text: 'TEXT' }[c.type];
}

/** A column's definition, its name and type, as CREATE TABLE and ADD COLUMN take it. */
export const columnSql = (engine: 'sqlite' | 'postgres', c: TypedColumn) =>
  `${quoteIdent(c.name)} ${sqlType(engine, c)}`;

/** The `<column>_utc` of a timestamp column in the view of current records: ISO 8601 text (SQLite) or timestamptz (PostgreSQL). */
export function utcExpression(engine: 'sqlite' | 'postgres', quoted: string): string {
  return engine === 'postgres'
    ? `to_timestamp(${quoted} / 1000.0)`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', ${quoted} / 1000.0, 'unixepoch')`;
}

/** A text column's value: strings as they are, numbers and booleans as JSON writes them, arrays and objects as JSON. */
function textValue(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/**
 * A record value as its column stores it. A value the model's type does not
 * hold (the build writes such values as null, so only a record changed by
 * hand has one) is NULL in its column; the `record` column holds it as it is.
 */
const TO_COLUMN: Readonly<Record<ColumnType, (v: unknown) => unknown>> = {
  integer: (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null),
  real: (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null),
  // 1 and 0 in both engines: PostgreSQL reads '1' and '0' as booleans.
  boolean: (v) => (v === true ? 1 : v === false ? 0 : null),
  text: textValue,
};

/**
 * A column value as read back from either engine, as text compared with
 * `keyText` of a record's value: libsql gives numbers, pg gives bigint as a
 * string and booleans as booleans, SQLite booleans as 0/1.
 */
export function storedKeyText(type: ColumnType, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (type === 'boolean') return v === true || v === 1 || v === '1' || v === 't' || v === 'true' ? 'true' : 'false';
  return String(v);
}

/** A record's key value as text, the form `storedKeyText` gives a stored one. */
export function keyText(type: ColumnType, v: unknown): string | null {
  const stored = TO_COLUMN[type](v);
  return type === 'boolean' ? storedKeyText(type, stored) : textValue(stored);
}

/**
 * A key value given on the command line (`history log`) as the column's
 * parameter, or undefined when no value of the column's type reads so.
 */
export function keyParameter(type: ColumnType, text: string): unknown {
  switch (type) {
    case 'integer':
      return /^-?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
    case 'real':
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) ? Number(text) : undefined;
    case 'boolean':
      return text === 'true' ? 1 : text === 'false' ? 0 : undefined;
    case 'text':
      return text;
  }
}

export type RowFunction = (id: number, baseUrl: string, time: string, text: string, r: ExportRecord) => unknown[];
const rowFunctions = new Map<string, RowFunction>();

/**
 * A versions-table row from a record: [version_id, base_url, seen_from,
 * seen_to, record, ...catalog columns], each column's value as its type
 * stores it. Generated per export, because reading `r["name"]` with a
 * constant name is several times faster than `r[column]` with a varying one,
 * and this runs for every column of every record of a first load. Names come
 * from the catalog and are JSON-quoted besides.
 */
export function rowFunction(columns: readonly TypedColumn[]): RowFunction {
  const cacheKey = JSON.stringify(columns);
  let f = rowFunctions.get(cacheKey);
  if (!f) {
    const values = columns.map((c) => `as_${c.type}(r[${JSON.stringify(c.name)}])`).join(', ');
    f = new Function(
      'as_integer',
      'as_real',
      'as_boolean',
      'as_text',
      `return function row(id, baseUrl, time, text, r) {\nreturn [id, baseUrl, time, null, text, ${values}];\n};`,
    )(TO_COLUMN.integer, TO_COLUMN.real, TO_COLUMN.boolean, TO_COLUMN.text) as RowFunction;
    rowFunctions.set(cacheKey, f);
  }
  return f;
}
