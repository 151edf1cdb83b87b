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
export const MAX_CELL_TEXT = 32_767;

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const NS_R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/**
 * Style indexes of styles.xml's cellXfs: booleans carry a boolean number
 * format (so that every reader shows TRUE/FALSE, also where it would show a
 * boolean cell's 0/1), whole numbers (bytes, counts, cores) thousands
 * separators, and a text with a line break wraps within its cell instead of
 * running into the rows below.
 */
const STYLE = { plain: 0, bold: 1, dateTime: 2, boolean: 3, wholeNumber: 4, wrapped: 5, boldWrapped: 6 } as const;

/** Days between the spreadsheet epoch (1899-12-30) and the Unix epoch. */
const EPOCH_DAYS = 25_569;

/** A text made safe for XML and read back as it was: control characters and OOXML's own `_xHHHH_` escapes are escaped as `_xHHHH_`. */
const NEEDS_ESCAPE =
  /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

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
 * is written only after an empty cell, which is left out.
 */
function cellOpen(ref: string | undefined): string {
  return ref === undefined ? '<c' : `<c r="${ref}"`;
}

/**
 * A text cut to what a cell holds, on a character boundary: a cut between
 * the two halves of a surrogate pair (an emoji, a character outside the BMP)
 * would leave half a character, which no UTF-8 file can hold (it became
 * U+FFFD).
 */
export function cellText(text: string): string {
  if (text.length <= MAX_CELL_TEXT) return text;
  const high = text.charCodeAt(MAX_CELL_TEXT - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? MAX_CELL_TEXT - 1 : MAX_CELL_TEXT);
}

/**
 * Characters a `<v>` value cannot carry: those that need an `_xHHHH_` escape (which a reader does not decode in `<v>`),
 * and whitespace at either end (which LibreOffice trims there).
 */
const NOT_FOR_VALUE =
  /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|_x[0-9A-Fa-f]{4}_|^\s|\s$/;

/**
 * A text with a carriage return and a line feed: LibreOffice reads an inline
 * string's line breaks as paragraphs, and a CR among them comes back as a
 * line feed whichever way it is written (`_x000D_`, `&#13;`). A string value
 * (`t="str"`: a text, not a formula; there is no `<f>`) with `&#13;` keeps
 * every CR, in LibreOffice as in Excel. Only where the text fits a value;
 * otherwise it stays an inline string (a lone CR, without line feeds, comes
 * back from one as a CR).
 */
function asStringValue(t: string): boolean {
  return t.includes('\r') && t.includes('\n') && !NOT_FOR_VALUE.test(t);
}

/** The entity a `<v>` value writes for one of `&`, `<`, `>` and CR. */
const valueEntity = (c: string): string => (c === '\r' ? '&#13;' : c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;');

function textCell(ref: string | undefined, text: string, style: number): string {
  const t = cellText(text);
  // Multi-line texts wrap within their cell.
  const s = t.includes('\n') || t.includes('\r') ? (style === STYLE.bold ? STYLE.boldWrapped : STYLE.wrapped) : style;
  if (asStringValue(t)) {
    return `${cellOpen(ref)} s="${s}" t="str"><v>${t.replace(/[&<>\r]/g, valueEntity)}</v></c>`;
  }
  // The attribute only where it matters: it is most of a short cell's bytes.
  const open = LOOSE_SPACE.test(t) ? '<t xml:space="preserve">' : '<t>';
  return `${cellOpen(ref)}${s ? ` s="${s}"` : ''} t="inlineStr"><is>${open}${xmlText(t)}</t></is></c>`;
}

function cellXml(ref: string | undefined, cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number')
    return `${cellOpen(ref)}${Number.isInteger(cell) ? ` s="${STYLE.wholeNumber}"` : ''}><v>${cell}</v></c>`;
  if (typeof cell === 'boolean') return `${cellOpen(ref)} s="${STYLE.boolean}" t="b"><v>${cell ? 1 : 0}</v></c>`;
  if (typeof cell === 'string') return textCell(ref, cell, STYLE.plain);
  return `${cellOpen(ref)} s="${STYLE.dateTime}"><v>${cell.ms / 86_400_000 + EPOCH_DAYS}</v></c>`;
}

/** Width in characters of a cell as displayed. */
export function cellWidth(cell: Cell): number {
  if (cell === null) return 0;
  if (typeof cell === 'string') return cell.length;
  if (typeof cell === 'boolean') return 5;
  if (typeof cell === 'number') {
    const plain = String(cell).length;
    // Whole numbers are shown with thousands separators.
    return Number.isInteger(cell) ? plain + Math.floor((String(Math.abs(cell)).length - 1) / 3) : plain;
  }
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
    ? '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
      '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>'
    : '<sheetViews><sheetView workbookViewId="0"/></sheetViews>';
  head += '<sheetFormatPr defaultRowHeight="15"/>';
  if (n > 0)
    head += `<cols>${sheet.widths.map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`).join('')}</cols>`;
  head += '<sheetData>';
  if (n > 0) {
    const style = sheet.table || sheet.boldRows?.has(0) ? STYLE.bold : STYLE.plain;
    head += `<row r="1">${sheet.headers.map((h) => textCell(undefined, h, style)).join('')}</row>`;
  }
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

/**
 * docProps/core.xml: the document properties Excel and file managers show.
 * Its times are the snapshot's, not the time the file was made, so that the
 * same snapshot always gives the same bytes.
 */
export function corePropsXml(p: { title: string; creator: string; time: string; description: string }): string {
  // W3CDTF without milliseconds, as Excel writes it.
  const when = p.time.replace(/\.\d+Z$/, 'Z');
  return (
    `${XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
    'xmlns:dc="http://purl.org/dc/elements/1.1/" ' +
    'xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    `<dc:title>${attr(p.title)}</dc:title><dc:creator>${attr(p.creator)}</dc:creator><dc:description>${attr(p.description)}</dc:description>` +
    `<dcterms:created xsi:type="dcterms:W3CDTF">${when}</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">${when}</dcterms:modified>` +
    '</cp:coreProperties>'
  );
}

export function contentTypesXml(sheetCount: number): string {
  const sheets = Array.from(
    { length: sheetCount },
    (_, i) =>
      `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
  ).join('');
  return (
    `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>' +
    `${sheets}</Types>`
  );
}

export const ROOT_RELS_XML =
  `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>' +
  '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" ' +
  'Target="docProps/core.xml"/></Relationships>';

/** Sheet names in order, each with the range of its autofilter if it has one. */
export function workbookXml(sheets: ReadonlyArray<{ name: string; filter?: string }>): string {
  const list = sheets.map((s, i) => `<sheet name="${attr(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('');
  // Excel keeps an autofilter's range in this hidden name; without it, it repairs the file.
  const names = sheets
    .map((s, i) =>
      s.filter
        ? `<definedName name="_xlnm._FilterDatabase" localSheetId="${i}" hidden="1">'${attr(s.name.replace(/'/g, "''"))}'!${s.filter}</definedName>`
        : '',
    )
    .join('');
  const defined = names ? `<definedNames>${names}</definedNames>` : '';
  return `${XML_HEAD}<workbook xmlns="${NS}" xmlns:r="${NS_R}"><bookViews><workbookView/></bookViews><sheets>${list}</sheets>${defined}</workbook>`;
}

export function workbookRelsXml(sheetCount: number): string {
  const sheets = Array.from(
    { length: sheetCount },
    (_, i) =>
      `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" ` +
      `Target="worksheets/sheet${i + 1}.xml"/>`,
  ).join('');
  return (
    `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets}` +
    `<Relationship Id="rId${sheetCount + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" ` +
    'Target="styles.xml"/></Relationships>'
  );
}

export const STYLES_XML =
  `${XML_HEAD}<styleSheet xmlns="${NS}">` +
  '<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd hh:mm:ss.000"/>' +
  '<numFmt numFmtId="165" formatCode="&quot;TRUE&quot;;&quot;TRUE&quot;;&quot;FALSE&quot;"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="7"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  // 3: the built-in #,##0.
  '<xf numFmtId="3" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment vertical="top" wrapText="1"/></xf>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyAlignment="1"><alignment vertical="top" wrapText="1"/></xf></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  '</styleSheet>';
