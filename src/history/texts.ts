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
import { EXPORT_BATCH } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';

/** What a record's last line is in the file: nothing inside a record can start a line with two spaces and `}`. */
const RECORD_END = '\n  }';

/**
 * The record texts of an export file, or undefined when the text is not
 * framed as the writer frames it (the records themselves are checked by
 * `sameAsWritten`). JSON strings hold no raw newline, and every line inside a
 * record is indented further than its closing `}`, so the first `\n  }` after
 * a record's `{` is its end, in any file the writer wrote.
 */
export function splitRecordTexts(text: string): string[] | undefined {
  if (text === '[]\n') return [];
  if (!text.startsWith('[\n  {')) return undefined;
  const texts: string[] = [];
  let at = 4;
  for (;;) {
    const end = text.indexOf(RECORD_END, at);
    if (end < 0) return undefined;
    const after = end + RECORD_END.length;
    texts.push(text.slice(at, after));
    if (text.startsWith(',\n  {', after)) {
      at = after + 4;
      continue;
    }
    return after + 3 === text.length && text.endsWith('\n]\n') ? texts : undefined;
  }
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
