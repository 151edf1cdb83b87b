/**
 * Each record's text as an export file holds it: the history keeps it in the
 * `record` column (schema 2), so that a night finds its unchanged records by
 * comparing texts, without parsing, checking and re-serializing them again.
 *
 * The export writer (src/exports/serialize.ts) writes
 * `JSON.stringify(records, null, 2)` and a newline: `[\n  ` + the record
 * texts joined by `,\n  ` + `\n]\n` (`[]\n` when empty). A record's text runs
 * from its `{` to the `}` that closes it, with the file's indentation inside
 * it (its lines are indented four spaces, its last line two). It is JSON, so
 * `json_extract(record, '$.id')` and `record::json->>'id'` read it.
 */
import { compareRecords } from '../exports/order.js';
import { EXPORT_BATCH } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';

/** What a record's last line is in the file: nothing inside a record can start a line with two spaces and `}`. */
const RECORD_END = '\n  }';

/**
 * Where each record's text starts and ends in an export file (start, end,
 * start, end, …), or undefined when the file is not framed as the writer
 * frames it (the records themselves are checked by `sameAsWritten`). JSON
 * strings hold no raw newline, and every line inside a record is indented
 * further than its closing `}`, so the first `\n  }` after a record's `{` is
 * its end, in any file the writer wrote. The marks are ASCII, and no byte of
 * a multi-byte UTF-8 character is, so the same search finds the same records
 * in the file's text and in its bytes.
 */
function recordSpans(length: number, indexOf: (mark: string, from: number) => number, has: (mark: string, at: number) => boolean): number[] | undefined {
  if (length === 3 && has('[]\n', 0)) return [];
  if (!has('[\n  {', 0)) return undefined;
  const spans: number[] = [];
  let at = 4;
  for (;;) {
    const end = indexOf(RECORD_END, at);
    if (end < 0) return undefined;
    const after = end + RECORD_END.length;
    spans.push(at, after);
    if (has(',\n  {', after)) {
      at = after + 4;
      continue;
    }
    return after + 3 === length && has('\n]\n', after) ? spans : undefined;
  }
}

/** The record texts of an export file's text, or undefined when it is not framed as the writer frames it. */
export function splitRecordTexts(text: string): string[] | undefined {
  const spans = recordSpans(
    text.length,
    (mark, from) => text.indexOf(mark, from),
    (mark, at) => text.startsWith(mark, at),
  );
  if (!spans) return undefined;
  const texts = new Array<string>(spans.length / 2);
  for (let i = 0; i < texts.length; i++) texts[i] = text.slice(spans[2 * i]!, spans[2 * i + 1]!);
  return texts;
}

/** The texts an export file of these records holds, made as the writer makes them (a batch at a time). */
export function recordTextsOf(records: readonly ExportRecord[]): string[] {
  const texts: string[] = [];
  for (let i = 0; i < records.length; i += EXPORT_BATCH) {
    const batch = records.slice(i, i + EXPORT_BATCH);
    const split = splitRecordTexts(`${JSON.stringify(batch, null, 2)}\n`);
    if (split?.length !== batch.length) throw new Error('export records must be JSON objects with at least one column');
    texts.push(...split);
  }
  return texts;
}

/**
 * Whether texts[i] is exactly what the writer makes of records[i], for every
 * i of `which` (ascending): checked a batch at a time, as the writer
 * stringifies, which is faster than record by record.
 */
export function sameAsWritten(records: readonly ExportRecord[], texts: readonly string[], which: readonly number[]): boolean {
  for (let start = 0; start < which.length; start += EXPORT_BATCH) {
    const indices = which.slice(start, start + EXPORT_BATCH);
    const made = JSON.stringify(
      indices.map((i) => records[i]),
      null,
      2,
    );
    // `[\n  ` + the texts joined by `,\n  ` + `\n]`.
    if (made.length !== indices.reduce((n, i) => n + texts[i]!.length + 4, 2)) return false;
    let at = 4;
    for (const i of indices) {
      if (!made.startsWith(texts[i]!, at)) return false;
      at += texts[i]!.length + 4;
    }
  }
  return true;
}

/** What keeps an export file from coming back byte for byte from as-of: its layout, or its records' order (record n, from 1). */
export type FileProblem = { readonly kind: 'layout' } | { readonly kind: 'order'; readonly record: number };

/** The first pair of records out of the export order (by key, then by every column, as the writer sorts), as the later one's index. */
function firstOutOfOrder(records: readonly ExportRecord[], key: readonly string[], before?: ExportRecord): number | undefined {
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
 * Whether an export file (its bytes, valid UTF-8) is what the writer makes of
 * the records it holds: framed as the writer frames it, its records in the
 * export order and, with `layout`, every record's text exactly what the
 * writer makes of that record. Decodes and parses a batch of records at a
 * time, so that only a batch is ever held beside the bytes.
 */
export function fileProblem(bytes: Buffer, key: readonly string[], layout: boolean): FileProblem | undefined {
  const spans = recordSpans(
    bytes.length,
    (mark, from) => bytes.indexOf(mark, from, 'latin1'),
    (mark, at) => bytes.toString('latin1', at, at + mark.length) === mark,
  );
  if (!spans) return { kind: 'layout' };
  const count = spans.length / 2;
  let last: ExportRecord | undefined;
  for (let start = 0; start < count; start += EXPORT_BATCH) {
    const texts: string[] = [];
    for (let i = start; i < Math.min(count, start + EXPORT_BATCH); i++) texts.push(bytes.toString('utf8', spans[2 * i]!, spans[2 * i + 1]!));
    let records: ExportRecord[];
    try {
      records = texts.map((t) => JSON.parse(t) as ExportRecord);
    } catch {
      return { kind: 'layout' };
    }
    if (layout && !sameAsWritten(records, texts, texts.map((_, i) => i))) return { kind: 'layout' };
    const at = firstOutOfOrder(records, key, last);
    if (at !== undefined) return { kind: 'order', record: start + at };
    last = records[records.length - 1];
  }
  return undefined;
}
