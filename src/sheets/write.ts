/**
 * The spreadsheet forms of a snapshot (docs/spreadsheets.md), for `snapshot
 * --format` and `convert`: one export's records in memory at a time.
 */
import { FailedError } from '../errors.js';
import type { SheetFormat } from '../config/values.js';
import { CATALOG } from '../exports/catalog.js';
import { exportFileName } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { aboutSheet, ABOUT_SHEET } from './about.js';
import { cellOf, sheetColumns, type Cell, type SheetColumn } from './columns.js';
import { csvChunks } from './csv.js';
import type { ManifestEntry, Snapshot } from '../snapshot/dir.js';
import { csvFileName, workbookFileName, type ReadableManifest } from '../manifests.js';
import {
  cellWidth,
  columnLetters,
  contentTypesXml,
  corePropsXml,
  fitWidth,
  MAX_DATA_ROWS,
  ROOT_RELS_XML,
  sheetXml,
  STYLES_XML,
  workbookRelsXml,
  workbookXml,
  type SheetSpec,
} from './xlsx.js';
import { ZipTooLargeError, ZipWriter } from './zip.js';
import { secretFound, secretInBytes, type SecretMatcher } from '../publish/scan.js';

export type { SheetFormat } from '../config/values.js';

/** Writes one output file from text or byte pieces (the staging directory's writeChunks, or convert's temp-and-rename). */
export type SheetSink = (
  name: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
) => Promise<void>;

/** The manifest and each export's records, checked: an opened snapshot (src/snapshot/dir.ts). */
export type SheetSource = Pick<Snapshot, 'manifest' | 'records'>;

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

/** `users`, `users (2)`, … : one name per page of `maxRows` rows. */
export function sheetNames(exportName: string, count: number, maxRows: number): string[] {
  const pages = Math.max(1, Math.ceil(count / maxRows));
  return Array.from({ length: pages }, (_, i) => (i === 0 ? exportName : `${exportName} (${i + 1})`));
}

/** A manifest from disk names only the exports this version knows (openSnapshot refuses one naming an export twice): names become file and sheet names. */
function checkExports(m: ReadableManifest): void {
  const known = new Set(CATALOG.map((e) => e.name));
  for (const e of m.exports) {
    if (!known.has(e.export))
      throw new FailedError(
        `the snapshot manifest lists an export ${JSON.stringify(e.export.slice(0, 60))} that this version does not know; ` +
          'convert it with the version that wrote it',
      );
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

function exportSheet(
  columns: readonly SheetColumn[],
  records: readonly ExportRecord[],
  from: number,
  to: number,
  widths: readonly number[],
): SheetSpec {
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

/** What writing one export's forms needs besides its records, the same for every export. */
interface SheetPlan {
  readonly date: string;
  readonly csv: boolean;
  readonly xlsx: boolean;
  readonly maxRows: number;
}

/** An export's sheets, each made when asked for (its rows are read as the XML is written). */
type PreparedSheets = ReadonlyArray<() => SheetSpec>;

/**
 * One export's CSV file written through `writeCsv` (when asked for), and its
 * sheets ready to be written: one pass over the records measures the widths
 * of every page (a page of a long export is as wide as the first) and writes
 * the CSV file.
 */
async function prepareForms(
  entry: ManifestEntry,
  records: readonly ExportRecord[],
  plan: SheetPlan,
  writeCsv: SheetSink,
): Promise<PreparedSheets> {
  const columns = sheetColumns(entry.export, records);
  let measured: number[] | undefined;
  if (plan.csv) {
    if (plan.xlsx) measured = columns.map((c) => c.header.length);
    const file = csvFileName(exportFileName(entry.export, records.length, plan.date));
    await writeCsv(file, csvChunks(columns, records, measured));
  } else if (plan.xlsx) measured = measureWidths(columns, records);
  if (!plan.xlsx) return [];
  const widths = measured!.map(fitWidth);
  return sheetNames(entry.export, records.length, plan.maxRows).map(
    (_, p) => () =>
      exportSheet(columns, records, p * plan.maxRows, Math.min(records.length, (p + 1) * plan.maxRows), widths),
  );
}

/**
 * Writes the asked-for forms of every export of `source` through `sink`;
 * returns the files written, CSV files in export order, then the workbook.
 */
export async function writeSpreadsheets(
  source: SheetSource,
  formats: readonly SheetFormat[],
  sink: SheetSink,
  opts: SheetOptions = {},
): Promise<WrittenSheetFile[]> {
  if (formats.length === 0) return [];
  const m = source.manifest;
  checkExports(m);
  const plan: SheetPlan = {
    date: m.date,
    csv: formats.includes('csv'),
    xlsx: formats.includes('xlsx'),
    maxRows: opts.maxRows ?? MAX_DATA_ROWS,
  };
  const csvFiles: WrittenSheetFile[] = [];
  let previous = 0;
  const formsOf = async (i: number): Promise<PreparedSheets> => {
    const entry = m.exports[i]!;
    opts.beforeRead?.(previous);
    const records = await source.records(entry);
    previous = records.length;
    return prepareForms(entry, records, plan, async (file, chunks) => {
      await sink(file, chunks);
      csvFiles.push({ format: 'csv', file, export: entry.export });
    });
  };
  if (!plan.xlsx) {
    for (let i = 0; i < m.exports.length; i++) await formsOf(i);
    return csvFiles;
  }
  const file = workbookFileName(m.date);
  try {
    await sink(file, workbook(m, file, plan, opts.secrets ?? null, formsOf));
  } catch (err) {
    if (err instanceof ZipTooLargeError)
      throw new FailedError(`${file}: ${err.message}; write CSV only (--format csv)`);
    throw err;
  }
  return [...csvFiles, { format: 'xlsx', file }];
}

/** The workbook's bytes: the sheets of every export in the manifest's order, each export read and written in its turn. */
async function* workbook(
  m: ReadableManifest,
  file: string,
  plan: SheetPlan,
  secrets: SecretMatcher | null,
  formsOf: (i: number) => Promise<PreparedSheets>,
): AsyncGenerator<Buffer> {
  const names = m.exports.map((e) => sheetNames(e.export, e.count, plan.maxRows));
  // The workbook's number of each export's first sheet (xl/worksheets/sheetN.xml); sheet 1 is the About sheet.
  const firstSheet: number[] = [];
  names.reduce((n, pages) => (firstSheet.push(n), n + pages.length), 2);
  // Each block is searched for a secret in any spelling (the token scan) before compression hides it.
  const inspect = (block: Buffer): void => {
    const kind = secrets ? secretInBytes(secrets, block) : null;
    if (kind !== null) throw secretFound(kind, `the workbook ${file} being written`);
  };
  const zip = new ZipWriter(new Date(m.time), inspect, secrets ? Math.max(0, secrets.longest - 1) : 0);
  const sheets: Array<{ name: string; filter?: string }> = [{ name: ABOUT_SHEET }];
  // The sheet list is known from the manifest's counts and the catalog before any records are read.
  for (const pages of names) for (const name of pages) sheets.push({ name });
  yield* zip.entry('[Content_Types].xml', [contentTypesXml(sheets.length)]);
  yield* zip.entry('_rels/.rels', [ROOT_RELS_XML]);
  yield* zip.entry('xl/_rels/workbook.xml.rels', [workbookRelsXml(sheets.length)]);
  yield* zip.entry('xl/styles.xml', [STYLES_XML]);
  yield* zip.entry('docProps/core.xml', [
    corePropsXml({
      title: `svc-snapshot of ${m.baseUrl}, ${m.date}`,
      creator: `${m.tool.name} ${m.tool.version}`,
      time: m.time,
      description: `Snapshot of ${m.baseUrl} taken ${m.time} (${m.source}); times in UTC`,
    }),
  ]);
  yield* zip.entry(
    'xl/worksheets/sheet1.xml',
    sheetXml(aboutSheet(m, new Map(m.exports.map((e, i) => [e.export, names[i]!])))),
  );
  for (let i = 0; i < m.exports.length; i++) {
    const pages = await formsOf(i);
    for (let p = 0; p < pages.length; p++) {
      const sheet = pages[p]!();
      const columns = sheet.headers.length;
      if (columns > 0)
        sheets[firstSheet[i]! + p - 1]!.filter = `$A$1:$${columnLetters(columns - 1)}$${sheet.rowCount + 1}`;
      yield* zip.entry(`xl/worksheets/sheet${firstSheet[i]! + p}.xml`, sheetXml(sheet));
    }
  }
  // Last, because the autofilter ranges depend on the columns found in the data (one per map key).
  yield* zip.entry('xl/workbook.xml', [workbookXml(sheets)]);
  yield zip.end();
}
