/**
 * Where each record of an export file starts and ends, found without parsing
 * the file, and its records read a batch at a time from the file's bytes:
 * the history database keeps each record's text (src/history/texts.ts), and
 * the spreadsheet forms read a large export in several passes without
 * holding it parsed (src/sheets/).
 *
 * The export writer (src/exports/serialize.ts) writes
 * `JSON.stringify(records, null, 2)` and a newline: `[\n  ` + the record
 * texts joined by `,\n  ` + `\n]\n` (`[]\n` when empty).
 */
import { EXPORT_BATCH } from './serialize.js';
import type { ExportRecord } from './types.js';

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
export function recordSpans(length: number, indexOf: (mark: string, from: number) => number, has: (mark: string, at: number) => boolean): number[] | undefined {
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


/** Record spans of an export file's bytes (valid UTF-8), or undefined when it is not framed as the writer frames it. */
export function byteSpans(bytes: Buffer): number[] | undefined {
  return recordSpans(
    bytes.length,
    (mark, from) => bytes.indexOf(mark, from, 'latin1'),
    (mark, at) => bytes.toString('latin1', at, at + mark.length) === mark,
  );
}

/** An export's records, read again on each pass, from..to (the whole export by default). */
export interface RecordPasses {
  readonly length: number;
  each(from?: number, to?: number): Iterable<ExportRecord>;
}

/** Records in memory as passes. */
export function arrayPasses(records: readonly ExportRecord[]): RecordPasses {
  return {
    length: records.length,
    *each(from = 0, to = records.length) {
      for (let i = from; i < to; i++) yield records[i]!;
    },
  };
}

/**
 * The records of an export file's bytes, parsed a batch at a time on each
 * pass: a pass holds one batch of parsed records, not the export. Each
 * record's text is JSON (the spans are framed by the writer's layout); a
 * text that does not parse throws on the pass that reaches it.
 */
export function filePasses(bytes: Buffer, spans: readonly number[]): RecordPasses {
  const count = spans.length / 2;
  return {
    length: count,
    *each(from = 0, to = count) {
      for (let start = from; start < to; start += EXPORT_BATCH) {
        const end = Math.min(to, start + EXPORT_BATCH);
        // One parse per batch: the records' texts between brackets, as they stand in the file.
        const batch: unknown = JSON.parse(`[${bytes.toString('utf8', spans[2 * start]!, spans[2 * end - 1]!)}]`);
        if (!Array.isArray(batch) || batch.length !== end - start || batch.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
          throw new SyntaxError(`records ${start + 1} to ${end} are not ${end - start} JSON objects`);
        }
        yield* batch as ExportRecord[];
      }
    },
  };
}
