/**
 * An export file read as bytes, in the exact layout its serializer writes
 * (src/exports/serialize.ts: `JSON.stringify(records, null, 2)` and a
 * newline): where each record lies, and the values of its key columns,
 * found without parsing the file; and two files' records matched by those
 * keys, the newer file read only where its records are not the same bytes
 * as the older's (walkNewer). The diff then parses only the records that
 * differ (compare.ts). Every function here gives up (undefined) where the
 * bytes are not in that layout; the caller then parses the whole file.
 */
import { keyOfValues, matchKeys } from './match.js';

/** Where each record of a file lies: bytes `starts[i]` (its `{`) to `ends[i]` (after its `}`). */
export interface RecordRanges {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

const EMPTY = Buffer.from('[]\n');
/** The file's start up to its first record's `{`. */
const HEAD = Buffer.from('[\n  {');
/**
 * Between two records: `\n  },\n  {\n`. Records are indented by 2, their
 * fields by 4 and anything nested deeper, and no JSON string holds a raw
 * newline: `},\n  {` occurs nowhere else. It is searched for (its first
 * byte, rarer than a newline, makes the search fast) and the rest checked.
 */
const BETWEEN = Buffer.from('},\n  {');
/** The file's end from its last record's last line. */
const TAIL = Buffer.from('\n  }\n]\n');

/** The ranges of the file's records, when it has the serializer's layout and exactly `count` of them. */
export function splitRecords(bytes: Buffer, count: number): RecordRanges | undefined {
  if (bytes.equals(EMPTY)) return count === 0 ? { starts: new Int32Array(0), ends: new Int32Array(0) } : undefined;
  const len = bytes.length;
  // A record takes at least 5 bytes (`{\n  }`) and one more to the next.
  if (count < 1 || count > len / 6 || len < HEAD.length + TAIL.length) return undefined;
  if (bytes.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0 || bytes.compare(TAIL, 0, TAIL.length, len - TAIL.length) !== 0) return undefined;
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  const last = len - TAIL.length + 4;
  let start = HEAD.length - 1;
  let n = 0;
  for (;;) {
    const i = bytes.indexOf(BETWEEN, start + 1);
    if (i < 0 || i >= last) break;
    // The whole separator, and a record of at least `{\n  }` before it.
    if (bytes[i - 1] !== 0x20 || bytes[i - 2] !== 0x20 || bytes[i - 3] !== 0x0a || bytes[i + 6] !== 0x0a || i - 3 <= start || n === count - 1) return undefined;
    starts[n] = start;
    ends[n] = i + 1;
    n++;
    start = i + 5;
  }
  if (n !== count - 1 || start >= last - 1) return undefined;
  starts[n] = start;
  ends[n] = last;
  return { starts, ends };
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
function columnSpans(bytes: Buffer, ranges: RecordRanges, column: string): Spans | undefined {
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
    if (short && (bytes[i] !== 10 || bytes[i + 1] !== 32 || bytes[i + 2] !== 32 || bytes[i + 3] !== 32 || bytes[i + 4] !== 32 || bytes[i + 5] !== 34)) continue;
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
  let ascii = true;
  for (let k = 0; k < n && ascii; k++) if (plain[k] === 0) ascii = false;
  return { from, to, head, ascii };
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
  return { bytes, spans, ascii: spans.every((s) => s.ascii), absent: key.map((k) => ({} as Record<string, unknown>)[k]) };
}

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

/** Bytes `xf`..`xt` of x against `yf`..`yt` of y: negative, 0 or positive, as bytes (and then length) order them. */
function compareBytes(x: Buffer, xf: number, xt: number, y: Buffer, yf: number, yt: number): number {
  const n = Math.min(xt - xf, yt - yf);
  for (let k = 0; k < n; k++) {
    const d = x[xf + k]! - y[yf + k]!;
    if (d !== 0) return d;
  }
  return xt - xf - (yt - yf);
}

/** Record i of a against record j of b, by their key values' bytes (ascii keys: equal bytes are equal keys). */
function compareKeys(a: RecordKeys, i: number, b: RecordKeys, j: number): number {
  const ha = a.spans[0]!.head[i]!;
  const hb = b.spans[0]!.head[j]!;
  if (ha !== hb) return ha < hb ? -1 : 1;
  for (let c = 0; c < a.spans.length; c++) {
    const sa = a.spans[c]!;
    const sb = b.spans[c]!;
    const d = compareBytes(a.bytes, sa.from[i]! + 1, sa.to[i]! - 1, b.bytes, sb.from[j]! + 1, sb.to[j]! - 1);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * matchKeys (match.ts) of two files' records by their keys as strings: where
 * walkNewer gives up (a key not ascii, or a side not ascending). Undefined
 * when a key value does not parse.
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

function ascends(k: RecordKeys, count: number): boolean {
  for (let i = 1; i < count; i++) if (compareKeys(k, i - 1, k, i) >= 0) return false;
  return true;
}

/** How the newer file's records match the older's, found by walkNewer. */
export interface NewerWalk {
  /** The newer file's records, as splitRecords gives them. */
  readonly ranges: RecordRanges;
  /** Their key columns, as readKeys gives them. */
  readonly keys: RecordKeys;
  /** For each newer record, the older record it matches, or -1 (added). */
  readonly match: Int32Array;
  /** 1 where a newer record is the same bytes as the older it matches. */
  readonly same: Uint8Array;
}

/** Whether a separator (BETWEEN, then the next record's line) starts at `p`, before `last`. */
function separatorAt(bytes: Buffer, p: number, last: number): boolean {
  return p < last && bytes[p + 6] === 0x0a && bytes.compare(BETWEEN, 0, BETWEEN.length, p, p + BETWEEN.length) === 0;
}

/**
 * The older file's records (split, their keys read: every key ascii and
 * ascending) matched with the newer file's by a merge of their key bytes
 * (no key occurs twice on either side, so it matches as matchKeys would),
 * reading of the newer file only what the older does not already
 * say: where a newer record is the same bytes as the older record the merge
 * stands at, its extent and its keys are the older's (the same bytes hold the
 * same key, and no separator inside), and the merge moves on without
 * comparing keys; only the other newer records are split and have their
 * keys read. On two nights of a site most records are the same bytes, so
 * most of the newer file is compared once and never searched. The newer
 * file is held to what splitRecords and readKeys would hold it to (the
 * serializer's layout, `count` records, keys ascii and strictly ascending:
 * a record that matches an older one ascends by the merge's own order, an
 * added one is compared with the one before). Undefined when it is not so:
 * the caller then reads the newer file whole.
 */
export function walkNewer(older: RecordKeys, olderRanges: RecordRanges, olderCount: number, bytes: Buffer, count: number, key: readonly string[]): NewerWalk | undefined {
  const len = bytes.length;
  if (!older.ascii || !ascends(older, olderCount)) return undefined;
  if (count === 0 && bytes.equals(EMPTY)) {
    const none = new Int32Array(0);
    const spans = key.map(() => ({ from: none, to: none, head: new Float64Array(0), ascii: true }));
    return { ranges: { starts: none, ends: none }, keys: { bytes, spans, ascii: true, absent: key.map((k) => ({} as Record<string, unknown>)[k]) }, match: none, same: new Uint8Array(0) };
  }
  if (count < 1 || count > len / 6 || len < HEAD.length + TAIL.length) return undefined;
  if (bytes.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0 || bytes.compare(TAIL, 0, TAIL.length, len - TAIL.length) !== 0) return undefined;
  const last = len - TAIL.length + 4;
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  const spans = key.map(() => ({ from: new Int32Array(count), to: new Int32Array(count), head: new Float64Array(count), ascii: true }));
  const keys: RecordKeys = { bytes, spans, ascii: true, absent: key.map((k) => ({} as Record<string, unknown>)[k]) };
  const match = new Int32Array(count).fill(-1);
  const same = new Uint8Array(count);
  const a = older.bytes;
  let i = 0;
  let pos = HEAD.length - 1;
  /** Newer record j, at `at`, is older record o's bytes: its extent and key spans are the older's, moved. */
  const takeSame = (o: number, j: number, at: number): number => {
    const as = olderRanges.starts[o]!;
    for (let c = 0; c < spans.length; c++) {
      const from = older.spans[c]!;
      const to = spans[c]!;
      to.from[j] = from.from[o]! - as + at;
      to.to[j] = from.to[o]! - as + at;
      to.head[j] = from.head[o]!;
    }
    starts[j] = at;
    match[j] = o;
    same[j] = 1;
    return (ends[j] = olderRanges.ends[o]! - as + at);
  };
  for (let j = 0; j < count; j++) {
    const isLast = j === count - 1;
    let end = -1;
    if (i < olderCount) {
      const as = olderRanges.starts[i]!;
      const length = olderRanges.ends[i]! - as;
      const e = pos + length;
      if (e <= last && a.compare(bytes, pos, e, as, as + length) === 0 && (isLast ? e === last : separatorAt(bytes, e - 1, last))) end = takeSame(i, j, pos);
    }
    if (end < 0) {
      // As splitRecords: the first separator after the record's start ends it; the last record runs to the file's tail.
      const p = bytes.indexOf(BETWEEN, pos + 1);
      if (p >= 0 && p < last) {
        if (isLast || bytes[p - 1] !== 0x20 || bytes[p - 2] !== 0x20 || bytes[p - 3] !== 0x0a || bytes[p + 6] !== 0x0a || p - 3 <= pos) return undefined;
        end = p + 1;
      } else {
        if (!isLast || pos >= last - 1) return undefined;
        end = last;
      }
      // As readKeys, over this record alone.
      const one = { starts: Int32Array.of(pos), ends: Int32Array.of(end) };
      for (let c = 0; c < spans.length; c++) {
        const s = columnSpans(bytes, one, key[c]!);
        if (!s || !s.ascii) return undefined;
        spans[c]!.from[j] = s.from[0]!;
        spans[c]!.to[j] = s.to[0]!;
        spans[c]!.head[j] = s.head[0]!;
      }
      let d = -1;
      while (i < olderCount && (d = compareKeys(older, i, keys, j)) < 0) i++;
      if (i < olderCount && d === 0) {
        const as = olderRanges.starts[i]!;
        const ae = olderRanges.ends[i]!;
        match[j] = i;
        same[j] = ae - as === end - pos && a.compare(bytes, pos, end, as, ae) === 0 ? 1 : 0;
      }
    }
    starts[j] = pos;
    ends[j] = end;
    if (match[j]! >= 0) i = match[j]! + 1;
    // Ascending: a record matched is above the one before by the merge's own order (that one matched an older record
    // before this one's, or was found below the older record the merge stood at, and the older ascend); an added one is checked.
    if (j > 0 && match[j]! < 0 && compareKeys(keys, j - 1, keys, j) >= 0) return undefined;
    pos = end + 4;
  }
  return { ranges: { starts, ends }, keys, match, same };
}
