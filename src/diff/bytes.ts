/**
 * An export file read as bytes, in the exact layout its serializer writes
 * (src/exports/serialize.ts: `JSON.stringify(records, null, 2)` and a
 * newline): where each record lies, and the values of its key columns,
 * found without parsing the file. The diff then parses only the records
 * that differ (compare.ts). Every function here gives up (undefined) where
 * the bytes are not in that layout; the caller then parses the whole file.
 */
import { keyOfValues } from './match.js';

/** Where each record of a file lies: bytes `starts[i]` (its `{`) to `ends[i]` (after its `}`). */
export interface RecordRanges {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

const EMPTY = Buffer.from('[]\n');
/** The file's start up to its first record's `{`. */
const HEAD = Buffer.from('[\n  {');
/** Between two records: a record's `}` to the next one's `{` and its newline. Records are indented by 2, their fields by 4 and anything nested deeper, and no JSON string holds a raw newline: this occurs nowhere else. */
const SEP = Buffer.from('\n  },\n  {\n');
/** The file's end from its last record's last line. */
const TAIL = Buffer.from('\n  }\n]\n');

/** The ranges of the file's records, when it has the serializer's layout and exactly `count` of them. */
export function splitRecords(bytes: Buffer, count: number): RecordRanges | undefined {
  const starts: number[] = [];
  const ends: number[] = [];
  if (bytes.equals(EMPTY)) return count === 0 ? { starts, ends } : undefined;
  const len = bytes.length;
  if (len < HEAD.length + TAIL.length || bytes.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0 || bytes.compare(TAIL, 0, TAIL.length, len - TAIL.length) !== 0) return undefined;
  const last = len - TAIL.length + 4;
  let start = HEAD.length - 1;
  for (;;) {
    if (starts.length >= count) return undefined;
    const i = bytes.indexOf(SEP, start + 1);
    if (i < 0 || i + 4 > last) break;
    starts.push(start);
    ends.push(i + 4);
    start = i + 8;
  }
  if (start >= last - 1) return undefined;
  starts.push(start);
  ends.push(last);
  return starts.length === count ? { starts, ends } : undefined;
}

/** Record `i` parsed, or undefined when its bytes are not one JSON value. */
export function parseRecord<T>(bytes: Buffer, ranges: RecordRanges, i: number): T | undefined {
  try {
    return JSON.parse(bytes.toString('utf8', ranges.starts[i], ranges.ends[i])) as T;
  } catch {
    return undefined;
  }
}

/** Whether record `i` of `a` and record `j` of `b` are the same bytes. */
export function sameBytes(a: Buffer, ra: RecordRanges, i: number, b: Buffer, rb: RecordRanges, j: number): boolean {
  const as = ra.starts[i]!;
  const ae = ra.ends[i]!;
  const bs = rb.starts[j]!;
  const be = rb.ends[j]!;
  return ae - as === be - bs && a.compare(b, bs, be, as, ae) === 0;
}

const FAIL: unique symbol = Symbol('not one JSON value');

/** The JSON value of bytes `from` to `to`: a string without escapes directly (ids, mostly), anything else through JSON.parse. */
function valueAt(bytes: Buffer, from: number, to: number): unknown {
  if (to - from >= 2 && bytes[from] === 0x22 && bytes[to - 1] === 0x22) {
    let plain = true;
    for (let p = from + 1; p < to - 1; p++) {
      const c = bytes[p]!;
      if (c === 0x5c || c === 0x22 || c < 0x20) {
        plain = false;
        break;
      }
    }
    if (plain) return bytes.toString('utf8', from + 1, to - 1);
  }
  try {
    return JSON.parse(bytes.toString('utf8', from, to));
  } catch {
    return FAIL;
  }
}

/**
 * The values of column `column` in each record, as `record[column]` of the
 * parsed record gives them: from the record's top-level line
 * `\n    "<column>": <value>` (its last one, as JSON.parse keeps the last of
 * duplicate names), the value to the line's end without a trailing comma.
 * One pass over the file: each occurrence is given to the record it lies in.
 */
function columnValues(bytes: Buffer, ranges: RecordRanges, column: string): unknown[] | undefined {
  const n = ranges.starts.length;
  const absent = ({} as Record<string, unknown>)[column];
  const values = new Array<unknown>(n).fill(absent);
  if (n === 0) return values;
  const pattern = Buffer.from(`\n    ${JSON.stringify(column)}: `);
  const { starts, ends } = ranges;
  const limit = ends[n - 1]!;
  let r = 0;
  let pos = starts[0]!;
  for (;;) {
    const i = bytes.indexOf(pattern, pos);
    if (i < 0 || i >= limit) return values;
    while (ends[r]! <= i) r++;
    if (i < starts[r]!) return undefined;
    const from = i + pattern.length;
    let to = bytes.indexOf(0x0a, from);
    if (to < 0 || to >= ends[r]!) return undefined;
    pos = to;
    if (bytes[to - 1] === 0x2c) to--;
    const v = valueAt(bytes, from, to);
    if (v === FAIL) return undefined;
    values[r] = v;
  }
}

/** Each record's key (match.ts) for the key columns `key`, read from its bytes; undefined where the layout is not the serializer's. */
export function recordKeys(bytes: Buffer, ranges: RecordRanges, key: readonly string[]): string[] | undefined {
  const columns: unknown[][] = [];
  for (const k of key) {
    const values = columnValues(bytes, ranges, k);
    if (!values) return undefined;
    columns.push(values);
  }
  const n = ranges.starts.length;
  const keys = new Array<string>(n);
  const one = new Array<unknown>(key.length);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < columns.length; c++) one[c] = columns[c]![r];
    keys[r] = keyOfValues(one);
  }
  return keys;
}
