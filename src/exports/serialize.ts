/**
 * Serializing built exports, and nothing else: the file's text (whole, or in
 * pieces that join to the same bytes) and its name. Writing is the
 * publishing side's (src/snapshot/files.ts).
 */
import { format } from 'date-fns/format';
import { isMatch } from 'date-fns/isMatch';
import { parse } from 'date-fns/parse';
import type { ExportRecord, ExportResult } from './types.js';

/** An export file's content: a JSON array, 2-space indented, with a trailing newline (`[]` when empty). */
export function serializeExport(result: Pick<ExportResult, 'records'>): string {
  return `${JSON.stringify(result.records, null, 2)}\n`;
}

/**
 * `<count>-<export> (<M>-<D>-<YYYY>).json` (docs/exports.md) for a
 * `YYYY-MM-DD` date. The date is parsed and formatted in the same (local)
 * calendar, so the name does not depend on the process time zone.
 */
export function exportFileName(name: string, count: number, date: string): string {
  if (!Number.isSafeInteger(count) || count < 0)
    throw new Error(`export ${name}: count must be a non-negative integer, got ${count}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !isMatch(date, 'yyyy-MM-dd'))
    throw new Error(`export ${name}: date must be YYYY-MM-DD, got "${date}"`);
  const day = parse(date, 'yyyy-MM-dd', new Date(2000, 0, 1));
  return `${count}-${name} (${format(day, 'M-d-yyyy')}).json`;
}

/**
 * The export file's content in pieces, from the records in batches: joined,
 * exactly `serializeExport` of all of them (each record is indented the same
 * whether it is stringified in a batch or in the whole array).
 */
export function* serializeBatches(batches: Iterable<readonly ExportRecord[]>): Generator<string> {
  let first = true;
  for (const batch of batches) {
    if (batch.length === 0) continue;
    const json = JSON.stringify(batch, null, 2);
    yield first ? '[\n' : ',\n';
    // Without the batch's own "[\n" and "\n]".
    yield json.slice(2, -2);
    first = false;
  }
  yield first ? '[]\n' : '\n]\n';
}

/**
 * Records per batch: few enough that a batch's text (about 100 KB) is an
 * ordinary young-generation string; a text of several MB goes to V8's
 * large-object space and stays until the next full collection.
 */
export const EXPORT_BATCH = 100;
