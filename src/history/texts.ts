/**
 * Each record's text as an export file holds it, for the history's `record`
 * column (schema 2), so that a night finds its unchanged records by comparing
 * texts, without parsing them again. The export writer
 * (src/exports/serialize.ts) writes `JSON.stringify(records, null, 2)` and a
 * newline: a record's text runs from its `{` to the `}` that closes it, with
 * the file's indentation inside it (its lines are indented four spaces, its
 * last line two).
 */
import { compareRecords } from '../exports/order.js';
import { EXPORT_BATCH } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { recordRanges } from '../snapshot/records.js';

/** The texts an export file of these records holds, made as the writer makes them (a batch at a time), split by the one splitter. */
export function recordTextsOf(records: readonly ExportRecord[]): string[] {
  const texts: string[] = [];
  for (let i = 0; i < records.length; i += EXPORT_BATCH) {
    const batch = records.slice(i, i + EXPORT_BATCH);
    const bytes = Buffer.from(`${JSON.stringify(batch, null, 2)}\n`);
    const ranges = recordRanges(bytes);
    if (ranges?.starts.length !== batch.length)
      throw new Error('export records must be JSON objects with at least one column');
    ranges.starts.forEach((start, j) => texts.push(bytes.toString('utf8', start, ranges.ends[j])));
  }
  return texts;
}

/**
 * Whether texts[i] is exactly what the writer makes of records[i], for every
 * i: checked a batch at a time, as the writer stringifies, which is faster
 * than record by record.
 */
export function sameAsWritten(records: readonly ExportRecord[], texts: readonly string[]): boolean {
  for (let start = 0; start < texts.length; start += EXPORT_BATCH) {
    const batch = texts.slice(start, start + EXPORT_BATCH);
    const made = JSON.stringify(records.slice(start, start + EXPORT_BATCH), null, 2);
    // `[\n  ` + the texts joined by `,\n  ` + `\n]`.
    if (made.length !== batch.reduce((n, t) => n + t.length + 4, 2)) return false;
    let at = 4;
    for (const t of batch) {
      if (!made.startsWith(t, at)) return false;
      at += t.length + 4;
    }
  }
  return true;
}

/** What keeps an export file from coming back byte for byte from as-of: its layout, or its records' order (record n, from 1). */
export type FileProblem = { readonly kind: 'layout' } | { readonly kind: 'order'; readonly record: number };

/** The first pair of records out of the export order (by key, then by every column, as the writer sorts), as the later one's index. */
function firstOutOfOrder(
  records: readonly ExportRecord[],
  key: readonly string[],
  before?: ExportRecord,
): number | undefined {
  let a = before;
  // as-of sorts by the columns the records hold (an export holds the same columns in every record).
  const columns = Object.keys(before ?? records[0] ?? {});
  for (let i = 0; i < records.length; i++) {
    const b = records[i]!;
    if (a !== undefined && compareRecords(a, b, key, columns) > 0) return i;
    a = b;
  }
  return undefined;
}

/**
 * Whether an export file's record texts (as recordRanges finds them) are
 * what the writer makes of the records they hold: each JSON, in the export
 * order and, with `layout`, exactly what the writer makes of that record.
 * Parses a batch of records at a time, so that only a batch is ever held
 * beside the texts.
 */
export function fileProblem(
  texts: readonly string[],
  key: readonly string[],
  layout: boolean,
): FileProblem | undefined {
  let last: ExportRecord | undefined;
  for (let start = 0; start < texts.length; start += EXPORT_BATCH) {
    const batch = texts.slice(start, start + EXPORT_BATCH);
    let records: ExportRecord[];
    try {
      records = batch.map((t) => JSON.parse(t) as ExportRecord);
    } catch {
      return { kind: 'layout' };
    }
    if (layout && !sameAsWritten(records, batch)) return { kind: 'layout' };
    const at = firstOutOfOrder(records, key, last);
    if (at !== undefined) return { kind: 'order', record: start + at };
    last = records[records.length - 1];
  }
  return undefined;
}
