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
 * `onCell` sees every cell on the way (the workbook's column widths are
 * measured in the same pass).
 */
export function* csvChunks(columns: readonly SheetColumn[], records: readonly ExportRecord[], onCell?: (column: number, cell: Cell) => void): Generator<string> {
  yield `${BOM}${columns.map((c) => csvField(guardText(c.header))).join(',')}\r\n`;
  let chunk = '';
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let line = '';
    for (let j = 0; j < columns.length; j++) {
      const cell = cellOf(columns[j]!, r);
      onCell?.(j, cell);
      line += (j === 0 ? '' : ',') + csvCell(cell);
    }
    chunk += `${line}\r\n`;
    if ((i + 1) % ROWS_PER_CHUNK === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
