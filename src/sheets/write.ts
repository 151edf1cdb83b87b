/**
 * The spreadsheet forms of a snapshot (CONTRACT section 10), shared by
 * `snapshot --format` (from the exports just written into the staging
 * directory) and `convert` (from a published snapshot): one export's records
 * in memory at a time, each written to its CSV file and its workbook
 * sheets before the next is read.
 */
import { FailedError } from '../errors.js';
import type { SheetFormat } from '../config/values.js';
import { EXPORTS } from '../exports/catalog.js';
import { exportFileName } from '../exports/serialize.js';
import type { RecordPasses } from '../exports/file-records.js';
import { aboutSheet, ABOUT_SHEET } from './about.js';
import { cellOf, sheetColumns, type Cell, type SheetColumn } from './columns.js';
import { csvChunks } from './csv.js';
import type { SheetManifest, SheetManifestExport } from './snapshot-dir.js';
import { cellWidth, columnLetters, contentTypesXml, fitWidth, MAX_DATA_ROWS, ROOT_RELS_XML, sheetXml, STYLES_XML, workbookRelsXml, workbookXml, type SheetSpec } from './xlsx.js';
import { ZipTooLargeError, ZipWriter } from './zip.js';
import { bytesHoldSecret, type SecretMatcher } from '../publish/scan.js';

export type { SheetFormat } from '../config/values.js';

/** Writes one output file from text or byte pieces (the staging directory's writeChunks, or convert's temp-and-rename). */
export type SheetSink = (name: string, chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>) => Promise<void>;

export interface SheetSource {
  readonly manifest: SheetManifest;
  /** The records of one export, checked. */
  records(entry: SheetManifestExport): Promise<RecordPasses>;
}

export interface WrittenSheetFile {
  readonly format: SheetFormat;
  readonly file: string;
  /** CSV: the export it holds. */
  readonly export?: string;
}

export interface SheetOptions {
  /** Refuses a workbook block that holds a secret in any spelling (the token scan, before compression hides it). */
  readonly secrets?: SecretMatcher | null;
  /** Data rows per sheet; smaller only in tests. */
  readonly maxRows?: number;
  /**
   * The memory policy, from the command: called before each export is read,
   * with the number of records of the one before (already dropped), so that
   * a large export's garbage can be collected before the next is parsed.
   */
  readonly beforeRead?: (previousRecords: number) => void;
}

export function csvFileName(exportName: string, count: number, date: string): string {
  return exportFileName(exportName, count, date).replace(/\.json$/, '.csv');
}

export function workbookFileName(date: string): string {
  return `svc-snapshot-${date}.xlsx`;
}

/** `users`, `users (2)`, … : one name per page of `maxRows` rows. */
export function sheetNames(exportName: string, count: number, maxRows: number): string[] {
  const pages = Math.max(1, Math.ceil(count / maxRows));
  return Array.from({ length: pages }, (_, i) => (i === 0 ? exportName : `${exportName} (${i + 1})`));
}

/** A manifest from disk names only the exports this version knows, each once: names become file and sheet names. */
function checkExports(m: SheetManifest): void {
  const known = new Set(EXPORTS.map((e) => e.name));
  const seen = new Set<string>();
  for (const e of m.exports) {
    if (!known.has(e.export)) throw new FailedError(`the snapshot manifest lists an export ${JSON.stringify(e.export.slice(0, 60))} that this version does not know; convert it with the version that wrote it`);
    if (seen.has(e.export)) throw new FailedError(`the snapshot manifest lists export ${e.export} twice; the snapshot is damaged`);
    seen.add(e.export);
  }
}

/** Widest cell per column (cellWidth), header included. */
function measureWidths(columns: readonly SheetColumn[], records: RecordPasses): number[] {
  const widths = columns.map((c) => c.header.length);
  for (const r of records.each()) {
    for (let j = 0; j < columns.length; j++) {
      const w = cellWidth(cellOf(columns[j]!, r));
      if (w > widths[j]!) widths[j] = w;
    }
  }
  return widths;
}

function exportSheet(columns: readonly SheetColumn[], records: RecordPasses, from: number, to: number, widths: readonly number[]): SheetSpec {
  // One array refilled for each row: sheetXml is done with a row before it asks for the next.
  const row: Cell[] = new Array<Cell>(columns.length);
  function* rows(): Generator<Cell[]> {
    for (const r of records.each(from, to)) {
      for (let j = 0; j < columns.length; j++) row[j] = cellOf(columns[j]!, r);
      yield row;
    }
  }
  return { headers: columns.map((c) => c.header), widths, rows: rows(), rowCount: to - from, table: true };
}

function filterRange(columns: number, rows: number): string | undefined {
  return columns > 0 ? `$A$1:$${columnLetters(columns - 1)}$${rows + 1}` : undefined;
}

/** What the workbook needs to know of one export's sheets once they are written: how many columns (its filter ranges). */
interface ExportSheets {
  readonly columns: number;
}

/**
 * One export's spreadsheet forms: its CSV file (when asked) and its sheet
 * pages, each handed to `page` as the sheet to write as `xl/worksheets/
 * sheet<first + p>.xml`. Three passes over the records at most: the columns,
 * then the widths (writing the CSV file on the way, when asked), then the
 * cells of each page.
 */
async function* exportForms(
  entry: SheetManifestExport,
  records: RecordPasses,
  date: string,
  sink: SheetSink,
  withCsv: boolean,
  pages: readonly string[] | undefined,
  maxRows: number,
  page: (p: number, sheet: SheetSpec) => AsyncGenerator<Buffer>,
): AsyncGenerator<Buffer, ExportSheets & { csv?: WrittenSheetFile }> {
  const columns = sheetColumns(entry.export, records);
  let measured: number[] | undefined;
  let csv: WrittenSheetFile | undefined;
  if (withCsv) {
    // One pass measures the widths of every page (and writes the CSV file): a page of a long export is as wide as the first.
    const file = csvFileName(entry.export, records.length, date);
    measured = pages ? columns.map((c) => c.header.length) : undefined;
    await sink(file, csvChunks(columns, records, measured));
    csv = { format: 'csv', file, export: entry.export };
  } else if (pages) measured = measureWidths(columns, records);
  if (pages && measured) {
    const widths = measured.map(fitWidth);
    for (let p = 0; p < pages.length; p++) {
      const from = p * maxRows;
      yield* page(p, exportSheet(columns, records, from, Math.min(records.length, from + maxRows), widths));
    }
  }
  return { columns: columns.length, ...(csv ? { csv } : {}) };
}

/** The sheets of a workbook: About, then each export's pages, in manifest order. */
function workbookPages(m: SheetManifest, maxRows: number): Map<string, string[]> {
  return new Map(m.exports.map((e) => [e.export, sheetNames(e.export, e.count, maxRows)]));
}

function secretInspector(secrets: SecretMatcher | null | undefined): { inspect: (block: Buffer) => void; overlap: number } {
  const matcher = secrets ?? null;
  return {
    inspect: (block) => {
      if (matcher && bytesHoldSecret(matcher, block)) throw new FailedError('a token was found in the workbook being written; nothing was published (this is a bug: tokens must never be written to output)');
    },
    overlap: matcher ? Math.max(0, matcher.longest - 1) : 0,
  };
}

/**
 * The workbook's bytes: the package parts, the About sheet, each export's
 * pages as `sheets(entry, first)` yields them (first: the number of its first
 * sheet part), and the workbook with its sheet list and filter ranges.
 */
async function* workbookBytes(
  zip: ZipWriter,
  m: SheetManifest,
  pages: ReadonlyMap<string, readonly string[]>,
  maxRows: number,
  sheets: (entry: SheetManifestExport, first: number) => AsyncGenerator<Buffer, ExportSheets>,
): AsyncGenerator<Buffer> {
  const list: Array<{ name: string; filter?: string }> = [{ name: ABOUT_SHEET }];
  // The sheet list is known from the manifest's counts and the catalog before any records are read.
  for (const e of m.exports) for (const name of pages.get(e.export)!) list.push({ name });
  yield* zip.entry('[Content_Types].xml', [contentTypesXml(list.length)]);
  yield* zip.entry('_rels/.rels', [ROOT_RELS_XML]);
  yield* zip.entry('xl/_rels/workbook.xml.rels', [workbookRelsXml(list.length)]);
  yield* zip.entry('xl/styles.xml', [STYLES_XML]);
  yield* zip.entry('xl/worksheets/sheet1.xml', sheetXml(aboutSheet(m, pages)));
  let n = 1;
  for (const entry of m.exports) {
    const done = yield* sheets(entry, n + 1);
    const names = pages.get(entry.export)!;
    for (let p = 0; p < names.length; p++) {
      const rows = Math.min(entry.count, (p + 1) * maxRows) - p * maxRows;
      const filter = filterRange(done.columns, rows);
      if (filter !== undefined) list[n + p]!.filter = filter;
    }
    n += names.length;
  }
  // Last, because the autofilter ranges depend on the columns found in the data (one per map key).
  yield* zip.entry('xl/workbook.xml', [workbookXml(list)]);
  yield zip.end();
}

async function writeWorkbook(file: string, sink: SheetSink, bytes: AsyncIterable<Buffer>): Promise<WrittenSheetFile> {
  try {
    await sink(file, bytes);
  } catch (err) {
    if (err instanceof ZipTooLargeError) throw new FailedError(`${file}: ${err.message}; write CSV only (--format csv)`);
    throw err;
  }
  return { format: 'xlsx', file };
}

/**
 * Writes the asked-for forms of every export of `source` through `sink`, one
 * export at a time in manifest order; returns the files written, CSV files in
 * export order, then the workbook.
 */
export async function writeSpreadsheets(source: SheetSource, formats: readonly SheetFormat[], sink: SheetSink, opts: SheetOptions = {}): Promise<WrittenSheetFile[]> {
  if (formats.length === 0) return [];
  const m = source.manifest;
  checkExports(m);
  const maxRows = opts.maxRows ?? MAX_DATA_ROWS;
  const withCsv = formats.includes('csv');
  const written: WrittenSheetFile[] = [];
  let previous = 0;
  const read = async (entry: SheetManifestExport): Promise<RecordPasses> => {
    opts.beforeRead?.(previous);
    const records = await source.records(entry);
    previous = records.length;
    return records;
  };
  const noPages = async function* (): AsyncGenerator<Buffer> {};
  if (!formats.includes('xlsx')) {
    for (const entry of m.exports) {
      const forms = exportForms(entry, await read(entry), m.date, sink, true, undefined, maxRows, noPages);
      let step = await forms.next();
      while (!step.done) step = await forms.next();
      if (step.value.csv) written.push(step.value.csv);
    }
    return written;
  }
  const pages = workbookPages(m, maxRows);
  const { inspect, overlap } = secretInspector(opts.secrets);
  const zip = new ZipWriter(new Date(m.time), inspect, overlap);
  const bytes = workbookBytes(zip, m, pages, maxRows, async function* (entry, first) {
    const done = yield* exportForms(entry, await read(entry), m.date, sink, withCsv, pages.get(entry.export)!, maxRows, (p, sheet) => zip.entry(`xl/worksheets/sheet${first + p}.xml`, sheetXml(sheet)));
    if (done.csv) written.push(done.csv);
    return done;
  });
  written.push(await writeWorkbook(workbookFileName(m.date), sink, bytes));
  return written;
}
