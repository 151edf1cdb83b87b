/**
 * An export file read as bytes, in the exact layout its serializer writes
 * (src/exports/serialize.ts: `JSON.stringify(records, null, 2)` and a
 * newline): where each record lies, and the values of its key columns,
 * found without parsing the file; and two files' records matched by those
 * keys (or, faster, by walk-newer.ts). The diff then parses only the
 * records that differ (compare.ts). Every function here gives up
 * (undefined) where the bytes are not in that layout; the caller then
 * parses the whole file.
 */
import { keyOfValues, matchKeys } from './match.js';
import type { RecordRanges } from '../snapshot/records.js';

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

/** The JSON value of bytes `from` to `to`: a string without escapes directly, anything else through JSON.parse. */
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

/** 1 for the bytes a string of plain ASCII holds: printable, no quote, no backslash. */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c <= 0x7e; c++) if (c !== 0x22 && c !== 0x5c) PLAIN[c] = 1;

/** What a record's top-level field line holds before the field's name. */
const LINE_START = Buffer.from('\n    "');

/**
 * Where each record's value of one column lies: bytes `from[r]` to `to[r]`
 * (without a trailing comma), or -1 when the record has no such field.
 * `ascii`: every record has it, a string of printable ASCII without escapes
 * (ids), so that its bytes between the quotes are exactly its characters.
 */
interface Spans {
  readonly from: Int32Array;
  readonly to: Int32Array;
  /** Where `ascii`: the string's first 6 bytes (0 past its end) as one number, which orders two strings unless it is equal. */
  readonly head: Float64Array;
  readonly ascii: boolean;
}

/**
 * The spans of column `column` in each record: the record's top-level line
 * `\n    "<column>": <value>` (its last one, as JSON.parse keeps the last
 * of duplicate names), the value to the line's end without a trailing
 * comma. One pass over the file: each line found is given to the record it
 * lies in.
 */
export function columnSpans(bytes: Buffer, ranges: RecordRanges, column: string): Spans | undefined {
  const n = ranges.starts.length;
  const from = new Int32Array(n).fill(-1);
  const to = new Int32Array(n).fill(-1);
  const head = new Float64Array(n);
  /** 1: the record's value is a string of plain ASCII. */
  const plain = new Uint8Array(n);
  if (n === 0) return { from, to, head, ascii: true };
  const name = Buffer.from(`${JSON.stringify(column)}: `);
  // A needle shorter than 7 bytes is searched for by its first byte (memchr),
  // a longer one by skipping: a short name is searched for without the line's
  // start (its spaces and quote would slow either search), which is then checked.
  const short = name.length - 1 < 7;
  const needle = short ? name.subarray(1) : Buffer.concat([LINE_START, name.subarray(1)]);
  const back = short ? LINE_START.length : 0;
  const { starts, ends } = ranges;
  const limit = ends[n - 1]!;
  let r = 0;
  let pos = starts[0]! + back;
  for (;;) {
    const at = bytes.indexOf(needle, pos);
    if (at < 0 || at >= limit) break;
    const i = at - back;
    const value = at + needle.length;
    pos = value;
    // 10 32 32 32 32 34: LINE_START
    if (
      short &&
      (bytes[i] !== 10 ||
        bytes[i + 1] !== 32 ||
        bytes[i + 2] !== 32 ||
        bytes[i + 3] !== 32 ||
        bytes[i + 4] !== 32 ||
        bytes[i + 5] !== 34)
    )
      continue;
    while (ends[r]! <= i) r++;
    if (i < starts[r]!) return undefined;
    let end = value;
    let isPlain = 0;
    if (bytes[value] === 0x22) {
      // A string: its closing quote ends the line (or precedes its comma) if all it holds is plain ASCII.
      end++;
      while (PLAIN[bytes[end]!] === 1) end++;
      if (bytes[end] === 0x22 && (bytes[end + 1] === 0x0a || (bytes[end + 1] === 0x2c && bytes[end + 2] === 0x0a))) {
        isPlain = 1;
        let h = 0;
        for (let p = value + 1; p < value + 7; p++) h = h * 256 + (p < end ? bytes[p]! : 0);
        head[r] = h;
      }
    }
    while (end < limit && bytes[end] !== 0x0a) end++;
    if (end >= ends[r]!) return undefined;
    from[r] = value;
    to[r] = bytes[end - 1] === 0x2c ? end - 1 : end;
    plain[r] = isPlain;
    pos = end;
  }
  return { from, to, head, ascii: !plain.includes(0) };
}

/** The key columns of a file's records, read from their bytes. */
export interface RecordKeys {
  readonly bytes: Buffer;
  readonly spans: readonly Spans[];
  /** Every key column `ascii`. */
  readonly ascii: boolean;
  /** What `record[column]` gives for each key column a record lacks. */
  readonly absent: readonly unknown[];
}

/** The key columns `key` of each record, found in its bytes; undefined where the layout is not the serializer's. */
export function readKeys(bytes: Buffer, ranges: RecordRanges, key: readonly string[]): RecordKeys | undefined {
  const spans: Spans[] = [];
  for (const k of key) {
    const s = columnSpans(bytes, ranges, k);
    if (!s) return undefined;
    spans.push(s);
  }
  return {
    bytes,
    spans,
    ascii: spans.every((s) => s.ascii),
    absent: absentValues(key),
  };
}

/** What `record[column]` gives for each key column a record lacks (what an empty object inherits). */
export const absentValues = (key: readonly string[]): unknown[] => key.map((k) => (({}) as Record<string, unknown>)[k]);

/** Record r's key (match.ts), or undefined when a key value does not parse. */
export function keyAt(keys: RecordKeys, r: number): string | undefined {
  const values: unknown[] = [];
  for (let c = 0; c < keys.spans.length; c++) {
    const s = keys.spans[c]!;
    const f = s.from[r]!;
    const v = f < 0 ? keys.absent[c] : valueAt(keys.bytes, f, s.to[r]!);
    if (v === FAIL) return undefined;
    values.push(v);
  }
  return keyOfValues(values);
}

/** Every record's key, or undefined when a key value does not parse. */
function allKeys(keys: RecordKeys, count: number): string[] | undefined {
  const out = new Array<string>(count);
  for (let r = 0; r < count; r++) {
    const k = keyAt(keys, r);
    if (k === undefined) return undefined;
    out[r] = k;
  }
  return out;
}

/**
 * matchKeys (match.ts) of two files' records by their keys as strings: where
 * walkNewer (walk-newer.ts) gives up (a key not ascii, or a side not
 * ascending), or is switched off. Undefined when a key value does not parse.
 */
export function matchRecordKeys(
  a: RecordKeys,
  aCount: number,
  b: RecordKeys,
  bCount: number,
  onMatch: (olderIndex: number, newerIndex: number) => void,
  onAdded: (newerIndex: number) => void,
): Uint8Array | undefined {
  const ka = allKeys(a, aCount);
  const kb = ka && allKeys(b, bCount);
  if (!ka || !kb) return undefined;
  return matchKeys(ka, kb, onMatch, onAdded);
}
