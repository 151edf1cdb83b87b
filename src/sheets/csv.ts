/**
 * CSV as RFC 4180 has it, UTF-8 with a byte-order mark so that Excel reads
 * non-ASCII names right, and a leading `'` on a text a spreadsheet would take
 * for a formula (docs/spreadsheets.md). csv-stringify would need the same
 * formula cast and value formatting around it; this is shorter.
 */
import type { Cell, SheetColumn } from './columns.js';
import { cellOf } from './columns.js';
import { cellWidth } from './xlsx.js';
import type { ExportRecord } from '../exports/types.js';

export const BOM = '\uFEFF';

/** A text field, prefixed with `'` when it would start a formula. */
export function guardText(text: string): string {
  const c = text.charCodeAt(0);
  // = + - @ TAB CR, by code: this runs once per text cell.
  return c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13 ? `'${text}` : text;
}

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A cell as CSV text: numbers and booleans as JSON writes them, date-times as ISO 8601 UTC (`iso`), null empty. */
export function csvCell(cell: Cell, iso = (ms: number) => new Date(ms).toISOString()): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  if (typeof cell === 'string') return csvField(guardText(cell));
  return iso(cell.ms);
}

const DAY_MS = 86_400_000;
/** Days whose date part a formatter keeps; past it, the cache starts over (an export of scattered dates stays correct, only slower). */
const MAX_CACHED_DAYS = 4096;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * `(ms) => new Date(ms).toISOString()` for any epoch ms a date-time cell
 * holds, without a Date per cell: the date part (`YYYY-MM-DDT`, however
 * toISOString writes the year) is kept per day, since an export's
 * timestamps fall on far fewer days than there are cells, and the time of
 * day is arithmetic on the milliseconds within the day (ECMAScript time has
 * no leap seconds; a Date truncates a fraction of a millisecond toward
 * zero). Equal for every valid time value: sheets-fast-paths.test.ts.
 */
export function isoTimestamps(): (ms: number) => string {
  const days = new Map<number, string>();
  return (ms) => {
    const t = Math.trunc(ms);
    // An exact remainder (no rounding of a quotient), made non-negative: the milliseconds since the day's midnight.
    let rest = t % DAY_MS;
    if (rest < 0) rest += DAY_MS;
    const day = (t - rest) / DAY_MS;
    let date = days.get(day);
    if (date === undefined) {
      if (days.size >= MAX_CACHED_DAYS) days.clear();
      // "…T00:00:00.000Z" without its 13-character time of day.
      date = new Date(day * DAY_MS).toISOString().slice(0, -13);
      days.set(day, date);
    }
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = Math.floor(rest / 1000);
    return `${date}${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[s]}.${THREE_DIGITS[rest - s * 1000]}Z`;
  };
}

/** Records per yielded piece of text. */
const ROWS_PER_CHUNK = 500;

/**
 * The CSV file of an export, in pieces: BOM, header row, one row per record.
 * With `widths`, each column's widest cell (cellWidth) is measured on the
 * way, for the workbook's column widths: one pass over the records for both.
 */
export function* csvChunks(
  columns: readonly SheetColumn[],
  records: readonly ExportRecord[],
  widths?: number[],
): Generator<string> {
  yield `${BOM}${columns.map((c) => csvField(guardText(c.header))).join(',')}\r\n`;
  const iso = isoTimestamps();
  let chunk = '';
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let line = '';
    for (let j = 0; j < columns.length; j++) {
      const cell = cellOf(columns[j]!, r);
      const text = csvCell(cell, iso);
      if (widths !== undefined) widths[j] = Math.max(widths[j]!, cellWidth(cell));
      line += j === 0 ? text : `,${text}`;
    }
    chunk += `${line}\r\n`;
    if ((i + 1) % ROWS_PER_CHUNK === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
