/**
 * FAST PATH: the newer of two export files read only where it differs from
 * the older. Stands in for recordRanges and readKeys of the whole newer file
 * (src/diff/bytes.ts) followed by matchRecordKeys, and is equivalent to them
 * wherever it answers: the same record ranges, key spans and matches (and
 * which matched records are the same bytes); where it does not (a key not
 * ASCII, a side not strictly ascending, the newer file out of layout) it
 * says so and the caller takes the plain path. Differential test:
 * test/unit/diff-bytes.test.ts (the walk against recordRanges, readKeys and
 * the merge over two nights, the newer out of order or out of layout, and
 * the diff of such two nights against the files parsed whole). What it
 * earns: bench/RESULTS.md.
 */
import { absentValues, columnSpans, sameBytes, type RecordKeys } from './bytes.js';
import { BETWEEN, EMPTY, HEAD, TAIL, type RecordRanges } from '../snapshot/records.js';

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

function ascends(k: RecordKeys, count: number): boolean {
  for (let i = 1; i < count; i++) if (compareKeys(k, i - 1, k, i) >= 0) return false;
  return true;
}

/** How the newer file's records match the older's, found by walkNewer. */
export interface NewerWalk {
  /** The newer file's records, as recordRanges gives them. */
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

/** Whether `bytes` can be `count` records framed as the serializer frames them (its head and tail). */
function framed(bytes: Buffer, count: number): boolean {
  const len = bytes.length;
  if (count < 1 || count > len / 6 || len < HEAD.length + TAIL.length) return false;
  return (
    bytes.compare(HEAD, 0, HEAD.length, 0, HEAD.length) === 0 &&
    bytes.compare(TAIL, 0, TAIL.length, len - TAIL.length) === 0
  );
}

/** The tables of a walk over `count` records, none of them read or matched yet. */
function newWalk(bytes: Buffer, count: number, key: readonly string[]): NewerWalk {
  const spans = key.map(() => ({
    from: new Int32Array(count),
    to: new Int32Array(count),
    head: new Float64Array(count),
    ascii: true,
  }));
  return {
    ranges: { starts: new Int32Array(count), ends: new Int32Array(count) },
    keys: { bytes, spans, ascii: true, absent: absentValues(key) },
    match: new Int32Array(count).fill(-1),
    same: new Uint8Array(count),
  };
}

/** Whether the newer record at `pos` is older record o's bytes, then a separator (the last: then the file's tail). */
function sameAsOlder(
  older: RecordKeys,
  olderRanges: RecordRanges,
  o: number,
  bytes: Buffer,
  pos: number,
  last: number,
  isLast: boolean,
): boolean {
  const as = olderRanges.starts[o]!;
  const length = olderRanges.ends[o]! - as;
  const e = pos + length;
  return (
    e <= last &&
    older.bytes.compare(bytes, pos, e, as, as + length) === 0 &&
    (isLast ? e === last : separatorAt(bytes, e - 1, last))
  );
}

/** Newer record j, at `at`, is older record o's bytes: its extent and key spans are the older's, moved. */
function takeSame(
  older: RecordKeys,
  olderRanges: RecordRanges,
  o: number,
  walk: NewerWalk,
  j: number,
  at: number,
): void {
  const as = olderRanges.starts[o]!;
  const spans = walk.keys.spans;
  for (let c = 0; c < spans.length; c++) {
    const from = older.spans[c]!;
    const to = spans[c]!;
    to.from[j] = from.from[o]! - as + at;
    to.to[j] = from.to[o]! - as + at;
    to.head[j] = from.head[o]!;
  }
  walk.ranges.starts[j] = at;
  walk.ranges.ends[j] = olderRanges.ends[o]! - as + at;
  walk.match[j] = o;
  walk.same[j] = 1;
}

/** As recordRanges: the first separator after the record's start ends it; the last record runs to the file's tail (-1: out of layout). */
function recordEnd(bytes: Buffer, pos: number, last: number, isLast: boolean): number {
  const p = bytes.indexOf(BETWEEN, pos + 1);
  if (p >= 0 && p < last) {
    if (
      isLast ||
      bytes[p - 1] !== 0x20 ||
      bytes[p - 2] !== 0x20 ||
      bytes[p - 3] !== 0x0a ||
      bytes[p + 6] !== 0x0a ||
      p - 3 <= pos
    )
      return -1;
    return p + 1;
  }
  if (!isLast || pos >= last - 1) return -1;
  return last;
}

/** Newer record j, at `pos`, split off and its keys read; false where the file is out of layout or a key not ascii. */
function readRecord(
  walk: NewerWalk,
  key: readonly string[],
  j: number,
  pos: number,
  last: number,
  isLast: boolean,
): boolean {
  const { bytes, spans } = walk.keys;
  const end = recordEnd(bytes, pos, last, isLast);
  if (end < 0) return false;
  walk.ranges.starts[j] = pos;
  walk.ranges.ends[j] = end;
  // As readKeys, over this record alone.
  const one = { starts: Int32Array.of(pos), ends: Int32Array.of(end) };
  for (let c = 0; c < spans.length; c++) {
    const s = columnSpans(bytes, one, key[c]!);
    if (!s || !s.ascii) return false;
    spans[c]!.from[j] = s.from[0]!;
    spans[c]!.to[j] = s.to[0]!;
    spans[c]!.head[j] = s.head[0]!;
  }
  return true;
}

/** The merge from older record i on to newer record j (read): its match, if an older has its key; returns where it stands. */
function mergeTo(
  older: RecordKeys,
  olderRanges: RecordRanges,
  olderCount: number,
  i: number,
  walk: NewerWalk,
  j: number,
): number {
  let d = -1;
  while (i < olderCount && (d = compareKeys(older, i, walk.keys, j)) < 0) i++;
  if (i < olderCount && d === 0) {
    walk.match[j] = i;
    walk.same[j] = sameBytes(older.bytes, olderRanges, i, walk.keys.bytes, walk.ranges, j) ? 1 : 0;
  }
  return i;
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
 * file is held to what recordRanges and readKeys would hold it to (the
 * serializer's layout, `count` records, keys ascii and strictly ascending:
 * a record that matches an older one ascends by the merge's own order, an
 * added one is compared with the one before). Undefined when it is not so:
 * the caller then reads the newer file whole.
 */
export function walkNewer(
  older: RecordKeys,
  olderRanges: RecordRanges,
  olderCount: number,
  bytes: Buffer,
  count: number,
  key: readonly string[],
): NewerWalk | undefined {
  if (!older.ascii || !ascends(older, olderCount)) return undefined;
  if (count === 0 && bytes.equals(EMPTY)) return newWalk(bytes, 0, key);
  if (!framed(bytes, count)) return undefined;
  const last = bytes.length - TAIL.length + 4;
  const walk = newWalk(bytes, count, key);
  const { keys, match } = walk;
  const ends = walk.ranges.ends;
  let i = 0;
  let pos = HEAD.length - 1;
  for (let j = 0; j < count; j++) {
    const isLast = j === count - 1;
    if (i < olderCount && sameAsOlder(older, olderRanges, i, bytes, pos, last, isLast)) {
      takeSame(older, olderRanges, i, walk, j, pos);
    } else {
      if (!readRecord(walk, key, j, pos, last, isLast)) return undefined;
      i = mergeTo(older, olderRanges, olderCount, i, walk, j);
    }
    if (match[j]! >= 0) i = match[j]! + 1;
    // Ascending: a record matched is above the one before by the merge's own order (that one matched an older record
    // before this one's, or was found below the older record the merge stood at, and the older ascend); an added one is checked.
    if (j > 0 && match[j]! < 0 && compareKeys(keys, j - 1, keys, j) >= 0) return undefined;
    pos = ends[j]! + 4;
  }
  return walk;
}
