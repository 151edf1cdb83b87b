/**
 * The parts of an XLSX workbook (ECMA-376 SpreadsheetML), written as text
 * pieces for the ZIP writer: a sheet is produced row by row and never held as
 * a tree of cells. Every text is an inline string cell (`t="inlineStr"`), so
 * nothing a server sends can become a formula; numbers and booleans are typed
 * cells; date-times are numbers in the date-time style, in UTC.
 */
import type { Cell } from './columns.js';

/** Data rows a sheet holds under its header row (1,048,576 rows in all). */
export const MAX_DATA_ROWS = 1_048_575;
/** The longest text a cell holds. */
const MAX_CELL_TEXT = 32_767;

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const NS_R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** Style indexes of styles.xml's cellXfs. */
const STYLE = { plain: 0, bold: 1, dateTime: 2 } as const;

/** Days between the spreadsheet epoch (1899-12-30) and the Unix epoch. */
const EPOCH_DAYS = 25_569;

/** A text made safe for XML and read back as it was: control characters and OOXML's own `_xHHHH_` escapes are escaped as `_xHHHH_`. */
const NEEDS_ESCAPE = /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function escapeOne(ch: string): string {
  switch (ch) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    case '_':
      return '_x005F_';
    default: {
      const code = ch.charCodeAt(0);
      // A lone surrogate cannot be written in UTF-8 at all.
      if (code >= 0xd800 && code <= 0xdfff) return '\uFFFD';
      return `_x${code.toString(16).toUpperCase().padStart(4, '0')}_`;
    }
  }
}

/** The escape itself: every match of NEEDS_ESCAPE replaced. */
export function escapeXmlText(text: string): string {
  return text.replace(NEEDS_ESCAPE, escapeOne);
}

/**
 * Every match of NEEDS_ESCAPE begins with one of these characters, so a text
 * without any of them needs nothing: most cells (ids, names, states) skip
 * the lookarounds of the full pattern.
 */
const MAY_NEED_ESCAPE = /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF_\uD800-\uDFFF]/;

/** escapeXmlText with a fast path for plain text (equal for every text: sheets-fast-paths.test.ts). */
export function xmlText(text: string): string {
  return MAY_NEED_ESCAPE.test(text) ? escapeXmlText(text) : text;
}

function attr(text: string): string {
  return xmlText(text).replace(/"/g, '&quot;');
}

/** `A`, `B`, … `Z`, `AA`, … for 0, 1, … */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** Whitespace that an XML reader may drop unless told to preserve it. */
const LOOSE_SPACE = /^\s|\s$|\s\s|[\t\n]/;

/**
 * `<c` and the cell's reference: `r` is optional (ECMA-376 Part 1, 18.3.1.4;
 * a cell without it is the one after the cell before it in its row), so it
 * is written only after an empty cell, which is left out. It was a fifth of
 * a sheet's bytes.
 */
function cellOpen(ref: string | undefined): string {
  return ref === undefined ? '<c' : `<c r="${ref}"`;
}

function textCell(ref: string | undefined, text: string, style: number): string {
  const t = text.length > MAX_CELL_TEXT ? text.slice(0, MAX_CELL_TEXT) : text;
  // The attribute only where it matters: it is most of a short cell's bytes.
  const open = LOOSE_SPACE.test(t) ? '<t xml:space="preserve">' : '<t>';
  return `${cellOpen(ref)}${style ? ` s="${style}"` : ''} t="inlineStr"><is>${open}${xmlText(t)}</t></is></c>`;
}

function cellXml(ref: string | undefined, cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return `${cellOpen(ref)}><v>${cell}</v></c>`;
  if (typeof cell === 'boolean') return `${cellOpen(ref)} t="b"><v>${cell ? 1 : 0}</v></c>`;
  if (typeof cell === 'string') return textCell(ref, cell, STYLE.plain);
  return `${cellOpen(ref)} s="${STYLE.dateTime}"><v>${cell.ms / 86_400_000 + EPOCH_DAYS}</v></c>`;
}

/** Width in characters of a cell as displayed. */
export function cellWidth(cell: Cell): number {
  if (cell === null) return 0;
  if (typeof cell === 'string') return cell.length;
  if (typeof cell === 'boolean') return 5;
  if (typeof cell === 'number') return String(cell).length;
  return 23;
}

/** Column widths that fit their contents, within bounds a screen can show. */
export function fitWidth(chars: number): number {
  return Math.min(60, Math.max(8, chars + 2));
}

export interface SheetSpec {
  readonly headers: readonly string[];
  readonly widths: readonly number[];
  /** Each row is written before the next is asked for, so a producer may refill one array. */
  readonly rows: Iterable<readonly Cell[]>;
  readonly rowCount: number;
  /** Header row bold and frozen, with an autofilter over the data. */
  readonly table: boolean;
  /** 0-based rows (header included) written bold: section titles of the About sheet. */
  readonly boldRows?: ReadonlySet<number>;
}

/** Rows per yielded piece of text. */
const ROWS_PER_PIECE = 200;

export function* sheetXml(sheet: SheetSpec): Generator<string> {
  const n = sheet.headers.length;
  const letters = Array.from({ length: n }, (_, i) => columnLetters(i));
  const last = n > 0 ? letters[n - 1]! : 'A';
  let head = `${XML_HEAD}<worksheet xmlns="${NS}" xmlns:r="${NS_R}">`;
  // Printed (or exported to PDF), the About sheet fits the page width; export sheets print across pages.
  if (!sheet.table) head += '<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>';
  head += `<dimension ref="A1:${last}${sheet.rowCount + 1}"/>`;
  head += sheet.table
    ? '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/><selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>'
    : '<sheetViews><sheetView workbookViewId="0"/></sheetViews>';
  head += '<sheetFormatPr defaultRowHeight="15"/>';
  if (n > 0) head += `<cols>${sheet.widths.map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`).join('')}</cols>`;
  head += '<sheetData>';
  if (n > 0) head += `<row r="1">${sheet.headers.map((h, i) => textCell(undefined, h, sheet.table || sheet.boldRows?.has(0) ? STYLE.bold : STYLE.plain)).join('')}</row>`;
  yield head;
  // A piece is its cells' strings joined once: one flat string, where
  // appending with += would build a tree of small strings that the ZIP
  // writer's encoding then has to walk and flatten.
  let parts: string[] = [];
  let r = 1;
  for (const row of sheet.rows) {
    r++;
    const bold = sheet.boldRows?.has(r - 1) ?? false;
    const rowNumber = String(r);
    let xml = `<row r="${rowNumber}">`;
    // A reference only for a cell after an empty one (empty cells are not written).
    let gap = false;
    for (let i = 0; i < row.length; i++) {
      const cell = row[i]!;
      if (cell === null) {
        gap = true;
        continue;
      }
      const ref = gap ? (letters[i] ?? columnLetters(i)) + rowNumber : undefined;
      gap = false;
      xml += bold && typeof cell === 'string' ? textCell(ref, cell, STYLE.bold) : cellXml(ref, cell);
    }
    parts.push(`${xml}</row>`);
    if (r % ROWS_PER_PIECE === 0) {
      yield parts.join('');
      parts = [];
    }
  }
  let tail = `${parts.join('')}</sheetData>`;
  if (sheet.table && n > 0) tail += `<autoFilter ref="A1:${last}${r}"/>`;
  const fit = sheet.table ? '' : ' fitToWidth="1" fitToHeight="0"';
  yield `${tail}<pageMargins left="0.5" right="0.5" top="0.5" bottom="0.5" header="0.3" footer="0.3"/><pageSetup orientation="landscape"${fit}/></worksheet>`;
}

export function contentTypesXml(sheetCount: number): string {
  const sheets = Array.from({ length: sheetCount }, (_, i) => `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('');
  return (
    `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
    `${sheets}</Types>`
  );
}

export const ROOT_RELS_XML =
  `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>';

/** Sheet names in order, each with the range of its autofilter if it has one. */
export function workbookXml(sheets: ReadonlyArray<{ name: string; filter?: string }>): string {
  const list = sheets.map((s, i) => `<sheet name="${attr(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('');
  // Excel keeps an autofilter's range in this hidden name; without it, it repairs the file.
  const names = sheets
    .map((s, i) => (s.filter ? `<definedName name="_xlnm._FilterDatabase" localSheetId="${i}" hidden="1">'${attr(s.name.replace(/'/g, "''"))}'!${s.filter}</definedName>` : ''))
    .join('');
  return `${XML_HEAD}<workbook xmlns="${NS}" xmlns:r="${NS_R}"><bookViews><workbookView/></bookViews><sheets>${list}</sheets>${names ? `<definedNames>${names}</definedNames>` : ''}</workbook>`;
}

export function workbookRelsXml(sheetCount: number): string {
  const sheets = Array.from(
    { length: sheetCount },
    (_, i) => `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
  ).join('');
  return (
    `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets}` +
    `<Relationship Id="rId${sheetCount + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`
  );
}

export const STYLES_XML =
  `${XML_HEAD}<styleSheet xmlns="${NS}">` +
  '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd hh:mm:ss.000"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  '</styleSheet>';
