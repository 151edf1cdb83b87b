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
import type { ExportRecord } from '../exports/types.js';
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
  records(entry: SheetManifestExport): Promise<ExportRecord[]>;
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
function measureWidths(columns: readonly SheetColumn[], records: readonly ExportRecord[]): number[] {
  const widths = columns.map((c) => c.header.length);
  for (const r of records) {
    for (let j = 0; j < columns.length; j++) {
      const w = cellWidth(cellOf(columns[j]!, r));
      if (w > widths[j]!) widths[j] = w;
    }
  }
  return widths;
}

function exportSheet(columns: readonly SheetColumn[], records: readonly ExportRecord[], from: number, to: number, widths: readonly number[]): SheetSpec {
  // One array refilled for each row: sheetXml is done with a row before it asks for the next.
  const row: Cell[] = new Array<Cell>(columns.length);
  function* rows(): Generator<Cell[]> {
    for (let i = from; i < to; i++) {
      const r = records[i]!;
      for (let j = 0; j < columns.length; j++) row[j] = cellOf(columns[j]!, r);
      yield row;
    }
  }
  return { headers: columns.map((c) => c.header), widths, rows: rows(), rowCount: to - from, table: true };
}

function filterRange(columns: number, rows: number): string | undefined {
  return columns > 0 ? `$A$1:$${columnLetters(columns - 1)}$${rows + 1}` : undefined;
}

/**
 * Writes the asked-for forms of every export of `source` through `sink`;
 * returns the files written, CSV files in export order, then the workbook.
 */
export async function writeSpreadsheets(source: SheetSource, formats: readonly SheetFormat[], sink: SheetSink, opts: SheetOptions = {}): Promise<WrittenSheetFile[]> {
  if (formats.length === 0) return [];
  const m = source.manifest;
  checkExports(m);
  const maxRows = opts.maxRows ?? MAX_DATA_ROWS;
  const written: WrittenSheetFile[] = [];
  let previous = 0;
  const read = async (entry: SheetManifestExport): Promise<ExportRecord[]> => {
    opts.beforeRead?.(previous);
    const records = await source.records(entry);
    previous = records.length;
    return records;
  };
  const writeCsv = async (entry: SheetManifestExport, columns: readonly SheetColumn[], records: readonly ExportRecord[], widths?: number[]) => {
    const file = csvFileName(entry.export, records.length, m.date);
    await sink(file, csvChunks(columns, records, widths));
    written.push({ format: 'csv', file, export: entry.export });
  };

  if (!formats.includes('xlsx')) {
    for (const entry of m.exports) {
      const records = await read(entry);
      await writeCsv(entry, sheetColumns(entry.export, records), records);
    }
    return written;
  }

  const withCsv = formats.includes('csv');
  const pages = new Map(m.exports.map((e) => [e.export, sheetNames(e.export, e.count, maxRows)]));
  const matcher = opts.secrets ?? null;
  const overlap = matcher ? Math.max(0, matcher.longest - 1) : 0;
  const zip = new ZipWriter(
    new Date(m.time),
    (block) => {
      if (matcher && bytesHoldSecret(matcher, block)) throw new FailedError('a token was found in the workbook being written; nothing was published (this is a bug: tokens must never be written to output)');
    },
    overlap,
  );
  async function* workbook(): AsyncGenerator<Buffer> {
    const sheets: Array<{ name: string; filter?: string }> = [{ name: ABOUT_SHEET }];
    // The sheet list and its filter ranges are known from the manifest's counts and the catalog before any records are read.
    for (const e of m.exports) for (const name of pages.get(e.export)!) sheets.push({ name });
    yield* zip.entry('[Content_Types].xml', [contentTypesXml(sheets.length)]);
    yield* zip.entry('_rels/.rels', [ROOT_RELS_XML]);
    yield* zip.entry('xl/_rels/workbook.xml.rels', [workbookRelsXml(sheets.length)]);
    yield* zip.entry('xl/styles.xml', [STYLES_XML]);
    yield* zip.entry('xl/worksheets/sheet1.xml', sheetXml(aboutSheet(m, pages)));
    let n = 1;
    for (const entry of m.exports) {
      const records = await read(entry);
      const columns = sheetColumns(entry.export, records);
      const names = pages.get(entry.export)!;
      // One pass measures the widths of every page (and writes the CSV file, if asked): a page of a long export is as wide as the first.
      let measured: number[];
      if (withCsv) {
        measured = columns.map((c) => c.header.length);
        await writeCsv(entry, columns, records, measured);
      } else measured = measureWidths(columns, records);
      const widths = measured.map(fitWidth);
      for (let p = 0; p < names.length; p++) {
        const from = p * maxRows;
        const to = Math.min(records.length, from + maxRows);
        n++;
        const filter = filterRange(columns.length, to - from);
        if (filter !== undefined) sheets[n - 1]!.filter = filter;
        yield* zip.entry(`xl/worksheets/sheet${n}.xml`, sheetXml(exportSheet(columns, records, from, to, widths)));
      }
    }
    // Last, because the autofilter ranges depend on the columns found in the data (one per map key).
    yield* zip.entry('xl/workbook.xml', [workbookXml(sheets)]);
    yield zip.end();
  }
  const file = workbookFileName(m.date);
  try {
    await sink(file, workbook());
  } catch (err) {
    if (err instanceof ZipTooLargeError) throw new FailedError(`${file}: ${err.message}; write CSV only (--format csv)`);
    throw err;
  }
  written.push({ format: 'xlsx', file });
  return written;
}
