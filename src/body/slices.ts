/**
 * KEPT FOR MEMORY, FENCED: slicing. Equivalent to JSON.parse of the whole
 * body (the same values in order; for a body that is not JSON, the same
 * message, fault position included), with no string longer than a slice.
 * Held by test/unit/body-slices.test.ts (every slice size from 1 byte
 * against JSON.parse of the whole body; the build's bytes with slices of
 * every size against the whole body). What it earns: bodies over V8's
 * 512 MB string limit at all, and a replay's peak memory (docs/performance.md).
 *
 * Array bodies parsed a slice at a time. A body is cut at top-level commas
 * into slices of about SLICE_BYTES, and each slice is parsed on its own, so
 * no string made from a body is longer than a slice: V8 refuses strings over
 * about 512 MB, and a whole body as text plus its parsed values takes several
 * times its size.
 *
 * Exactness, whatever the bytes: a slice that starts at the array's start or
 * just after a top-level comma, and that parses (wrapped in brackets) to at
 * least one element, ends before a top-level comma too; so when every slice
 * parses, the body is the JSON array of their elements in order, and when the
 * body is JSON, every slice cut by the scan parses. A body that is not JSON
 * fails in the first slice holding its first fault, and is described from a
 * window that reads exactly like the whole body up to that fault (see
 * `describeFault`), so the message is the whole body's, position included.
 */
import type { ByteReader } from './reader.js';
import { describeJsonFault } from '../util/json-error.js';

/**
 * A slice's target size. Small enough that its text is an ordinary young
 * string, freed by the next scavenge: a text over about 128 KB lives in V8's
 * large-object space, and one over about 1 MB (Node's external strings)
 * outside the heap, both freed only by a full collection: larger slices'
 * texts pile up as garbage.
 */
const SLICE_BYTES = 64 * 1024;

/**
 * Longest slice: one element (a record) longer than this is refused. Half of
 * V8's longest string, so that a slice's text can always be made.
 */
export const MAX_SLICE_BYTES = 256 * 1024 * 1024;

const BLOCK = 1024 * 1024;
/** What the scan for a cut reads at a time: a slice and a record's length past it, so that a file is read about twice, not a block per slice. */
const SCAN_BLOCK = SLICE_BYTES + 16 * 1024;

/** The body is not JSON: `describe` is what describeJsonError says of the whole body. */
export class SliceJsonError extends Error {
  constructor(readonly describe: string) {
    super(describe);
    this.name = 'SliceJsonError';
  }
}

/** One element of the body is longer than MAX_SLICE_BYTES (and no fault comes before its end). */
export class SliceTooLongError extends Error {
  constructor(readonly at: number) {
    super(`an element longer than ${MAX_SLICE_BYTES / 1024 / 1024} MB starts near byte ${at}`);
    this.name = 'SliceTooLongError';
  }
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Whether the body's first non-whitespace byte opens an array: only such a body is sliced. */
export function opensArray(r: ByteReader): boolean {
  for (let p = 0; p < r.size; p += BLOCK) {
    const b = r.read(p, p + BLOCK);
    for (let i = 0; i < b.length; i++) if (!isSpace(b[i])) return b[i] === 0x5b;
  }
  return false;
}

const NO_MORE = -1;
const TOO_LONG = -2;

/**
 * The top-level comma that ends the slice starting at `start` (0, or just
 * after a top-level comma): the first one at or after `from`. NO_MORE when
 * the array or the body ends first (the slice runs to the end), TOO_LONG
 * when none comes within MAX_SLICE_BYTES. Strings are skipped with their
 * escapes, and brackets and braces counted alike: exact for JSON; for
 * anything else it only decides which slice JSON.parse finds the fault in.
 */
function scanCut(r: ByteReader, start: number, from: number): number {
  let depth = start === 0 ? 0 : 1;
  let inString = false;
  let escaped = false;
  for (let p = start; p < r.size; p += SCAN_BLOCK) {
    if (p - start > MAX_SLICE_BYTES) return TOO_LONG;
    const b = r.read(p, p + SCAN_BLOCK);
    for (let i = 0; i < b.length; i++) {
      const c = b[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x22) inString = true;
      else if (c === 0x5b || c === 0x7b) depth++;
      else if (c === 0x5d || c === 0x7d) {
        if (--depth <= 0) return NO_MORE;
      } else if (c === 0x2c && depth === 1 && p + i >= from) {
        return p + i - start > MAX_SLICE_BYTES ? TOO_LONG : p + i;
      }
    }
  }
  return NO_MORE;
}

/** The slice's elements, or undefined when it does not parse. */
function parseSlice(text: string, first: boolean, last: boolean): unknown[] | undefined {
  try {
    return JSON.parse(`${first ? '' : '['}${text}${last ? '' : ']'}`) as unknown[];
  } catch {
    return undefined;
  }
}

/**
 * The parsed elements of an array body (one that `opensArray`), a slice at
 * a time. Throws SliceJsonError when the body is not JSON, with the whole
 * body's description of the fault, and SliceTooLongError for an element
 * longer than MAX_SLICE_BYTES. Another `sliceBytes` is for tests: 1 cuts
 * at every element, Infinity parses the body whole (one slice).
 */
export function* arraySlices(r: ByteReader, sliceBytes = SLICE_BYTES): Generator<unknown[], void, void> {
  let start = 0;
  // UTF-16 offset of `start` in the whole body's text: cuts fall on ASCII commas, so the texts of the slices and commas join to it.
  let offset = 0;
  for (;;) {
    const first = start === 0;
    const from = start + Math.max(1, sliceBytes);
    const cut = from >= r.size ? NO_MORE : scanCut(r, start, from);
    if (cut === TOO_LONG || (cut === NO_MORE && r.size - start > MAX_SLICE_BYTES)) throw tooLong(r, start, offset);
    const text = r.read(start, cut === NO_MORE ? r.size : cut).toString('utf8');
    const list = parseSlice(text, first, cut === NO_MORE);
    // An empty slice beside others stands for `[,` or `,]` or `,,`: not JSON.
    if (list === undefined || (list.length === 0 && !(first && cut === NO_MORE))) {
      throw new SliceJsonError(faultIn(r, start, offset, text, cut === NO_MORE ? '' : ',') ?? 'invalid JSON');
    }
    yield list;
    if (cut === NO_MORE) return;
    offset += text.length + 1;
    start = cut + 1;
  }
}

/** An element too long to slice: the whole body's fault if one comes before the window ends, else SliceTooLongError. */
function tooLong(r: ByteReader, start: number, offset: number): Error {
  const text = r.read(start, start + MAX_SLICE_BYTES).toString('utf8');
  const fault = faultIn(r, start, offset, text, '', /end of JSON input|Unterminated string/i);
  return fault === undefined ? new SliceTooLongError(start) : new SliceJsonError(fault);
}

/**
 * The whole body's description of its first fault, when it lies in the
 * window of `text` (every slice before it parsed); undefined when none, or
 * `unless` matches it. The window reads like the whole body from the slice
 * on: `[0,` puts JSON.parse in the state the whole body's parse is in after a
 * top-level comma, and the comma that ends the slice is kept (`suffix`), so
 * the fault is met at the same character in the same state.
 */
function faultIn(
  r: ByteReader,
  start: number,
  offset: number,
  text: string,
  suffix: string,
  unless?: RegExp,
): string | undefined {
  const prefix = start === 0 ? '' : '[0,';
  try {
    JSON.parse(`${prefix}${text}${suffix}`);
  } catch (e) {
    if (unless?.test(e instanceof Error ? e.message : String(e))) return undefined;
    return describeJsonFault(
      e,
      (position) => place(r, start, offset, text, position - prefix.length),
      () => false,
    );
  }
  return undefined;
}

/** Offset, line and column in the whole body's text of a position in a slice's text. */
function place(
  r: ByteReader,
  start: number,
  offset: number,
  text: string,
  local: number,
): { offset: number; lineColumn: string } {
  const at = offset + local;
  const before = text.slice(0, local);
  let lines = before.split('\n').length - 1;
  const inSlice = before.lastIndexOf('\n');
  let lastNewline: number;
  if (inSlice >= 0) lastNewline = offset + inSlice;
  else {
    const lf = lastByteBefore(r, start, 0x0a);
    lastNewline = lf < 0 ? -1 : offset - utf16Length(r, lf, start);
  }
  lines += countByte(r, start, 0x0a);
  return { offset: at, lineColumn: ` (line ${lines + 1}, column ${at - lastNewline})` };
}

function countByte(r: ByteReader, end: number, byte: number): number {
  let n = 0;
  for (let p = 0; p < end; p += BLOCK) {
    const b = r.read(p, Math.min(end, p + BLOCK));
    for (let i = b.indexOf(byte); i >= 0; i = b.indexOf(byte, i + 1)) n++;
  }
  return n;
}

function lastByteBefore(r: ByteReader, end: number, byte: number): number {
  for (let p = end; p > 0; p -= BLOCK) {
    const from = Math.max(0, p - BLOCK);
    const i = r.read(from, p).lastIndexOf(byte);
    if (i >= 0) return from + i;
  }
  return -1;
}

/**
 * Length in UTF-16 units of the text of bytes [from, to), both at character
 * boundaries. Decoded a block at a time, each block ending before a byte
 * that is not a UTF-8 continuation byte (or after three of them): there the
 * decoder's output does not depend on where it was cut.
 */
export function utf16Length(r: ByteReader, from: number, to: number): number {
  let n = 0;
  for (let p = from; p < to;) {
    let q = Math.min(to, p + BLOCK);
    if (q < to) {
      const b = r.read(q - 3, q + 1);
      for (let i = 3; i >= 0; i--) {
        if ((b[i]! & 0xc0) !== 0x80) {
          q = q - 3 + i;
          break;
        }
      }
      if (q <= p) q = Math.min(to, p + BLOCK);
    }
    n += r.read(p, q).toString('utf8').length;
    p = q;
  }
  return n;
}
