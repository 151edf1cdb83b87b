/**
 * Where each record of an export file lies, found without parsing it: the
 * one splitter of the layout its serializer writes (src/exports/serialize.ts:
 * `JSON.stringify(records, null, 2)` and a newline), for the diff (which
 * parses only the records that differ) and the history (which keeps each
 * record's text). A file not in that layout gives undefined: the diff then
 * parses it whole, the history refuses it.
 */

/** Where each record of a file lies: bytes `starts[i]` (its `{`) to `ends[i]` (after its `}`). */
export interface RecordRanges {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/** The file of no record. */
export const EMPTY = Buffer.from('[]\n');
/** The file's start up to its first record's `{`. */
export const HEAD = Buffer.from('[\n  {');
/**
 * Between two records: `\n  },\n  {\n`. Records are indented by 2, their
 * fields by 4 and anything nested deeper, and no JSON string holds a raw
 * newline: `},\n  {` occurs nowhere else. It is searched for (its first
 * byte, rarer than a newline, makes the search fast) and the rest checked.
 */
export const BETWEEN = Buffer.from('},\n  {');
/** The file's end from its last record's last line. */
export const TAIL = Buffer.from('\n  }\n]\n');

/** The ranges of the file's records (as many as it holds), when it has the serializer's layout. */
export function recordRanges(bytes: Buffer): RecordRanges | undefined {
  if (bytes.equals(EMPTY)) return { starts: new Int32Array(0), ends: new Int32Array(0) };
  const len = bytes.length;
  if (len < HEAD.length + TAIL.length) return undefined;
  if (
    bytes.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0 ||
    bytes.compare(TAIL, 0, TAIL.length, len - TAIL.length) !== 0
  )
    return undefined;
  let starts = new Int32Array(1024);
  let ends = new Int32Array(1024);
  const last = len - TAIL.length + 4;
  let start = HEAD.length - 1;
  let n = 0;
  for (;;) {
    const i = bytes.indexOf(BETWEEN, start + 1);
    if (i < 0 || i >= last) break;
    // The whole separator, and a record of at least `{\n  }` before it.
    if (
      bytes[i - 1] !== 0x20 ||
      bytes[i - 2] !== 0x20 ||
      bytes[i - 3] !== 0x0a ||
      bytes[i + 6] !== 0x0a ||
      i - 3 <= start
    )
      return undefined;
    if (n + 1 === starts.length) {
      starts = grown(starts);
      ends = grown(ends);
    }
    starts[n] = start;
    ends[n] = i + 1;
    n++;
    start = i + 5;
  }
  if (start >= last - 1) return undefined;
  starts[n] = start;
  ends[n] = last;
  return { starts: starts.slice(0, n + 1), ends: ends.slice(0, n + 1) };
}

function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
