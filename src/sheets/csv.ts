/**
 * CSV as RFC 4180 has it: CRLF line ends, a field in double quotes when it
 * holds a comma, a quote, CR or LF, quotes doubled inside. UTF-8 with a
 * byte-order mark, so that Excel reads non-ASCII names right. A text that a
 * spreadsheet would take for a formula gets a leading `'` (CONTRACT section
 * 10). A dependency (csv-stringify) would need the same formula cast and the
 * same value formatting around it; this is shorter.
 */
import type { Cell, SheetColumn } from './columns.js';
import { cellOf } from './columns.js';
import { cellWidth } from './xlsx.js';
import type { ExportRecord } from '../exports/types.js';

export const BOM = '\uFEFF';

/** What a spreadsheet program takes as the start of a formula (or of a DDE payload): `=`, `+`, `-`, `@`, tab, CR. */
export const FORMULA_START = /^[=+\-@\t\r]/;

/** A text field, prefixed with `'` when it would start a formula. */
export function guardText(text: string): string {
  const c = text.charCodeAt(0);
  // = + - @ TAB CR, by code: this runs once per text cell.
  return (c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) ? `'${text}` : text;
}

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A cell as CSV text: numbers and booleans as JSON writes them, date-times as ISO 8601 UTC, null empty. */
export function csvCell(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  if (typeof cell === 'string') return csvField(guardText(cell));
  return new Date(cell.ms).toISOString();
}

/** Records per yielded piece of text. */
const ROWS_PER_CHUNK = 500;

/**
 * The CSV file of an export, in pieces: BOM, header row, one row per record.
 * With `widths`, each column's widest cell (cellWidth) is measured on the
 * way, for the workbook's column widths: one pass over the records for both.
 */
export function* csvChunks(columns: readonly SheetColumn[], records: readonly ExportRecord[], widths?: number[]): Generator<string> {
  yield `${BOM}${columns.map((c) => csvField(guardText(c.header))).join(',')}\r\n`;
  let chunk = '';
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let line = '';
    for (let j = 0; j < columns.length; j++) {
      const cell = cellOf(columns[j]!, r);
      // csvCell and cellWidth in one: a number's text is its width.
      let text: string;
      let width: number;
      if (cell === null) {
        text = '';
        width = 0;
      } else if (typeof cell === 'string') {
        text = csvField(guardText(cell));
        width = cell.length;
      } else if (typeof cell === 'number') {
        text = String(cell);
        width = text.length;
      } else {
        text = csvCell(cell);
        width = cellWidth(cell);
      }
      if (widths !== undefined && width > widths[j]!) widths[j] = width;
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
