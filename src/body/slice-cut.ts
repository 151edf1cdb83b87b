/**
 * FAST PATH: where a slice of an array body ends, guessed. Stands in for
 * scanCut (src/body/slices.ts), which reads every byte of the slice in
 * JavaScript to track strings and nesting. Measured on an 89 MB drives body
 * (the bench's generator, 200,000 drives; median of 5, every slice parsed):
 * 634 ms with the guess, 865 ms with the scan (JSON.parse of the whole body
 * at once: 1,115 ms). Records of a list open alike (`{"id":`), so
 * the next top-level element is, almost always, the first place after the
 * target size where those opening bytes follow a comma; Buffer.indexOf finds
 * it natively.
 *
 * A guess is only ever kept when the slice it ends parses: a slice that
 * starts where an element starts and parses to at least one element ends
 * before a top-level comma (src/body/slices.ts says why), and a wrong guess
 * (inside a string, or in a nested list) does not parse, so the scan is
 * asked. Held by test/unit/body-slices.test.ts (every slice size from 1 byte,
 * guesses on and off, against JSON.parse of the whole body) and by
 * test/unit/fast-paths.test.ts; off: FAST_PATHS.sliceGuess.
 */
import type { ByteReader } from './reader.js';

/** How far past the target size a guess looks before leaving it to the scan. */
const SEARCH_BYTES = 16 * 1024;

const LONGEST_SIGNATURE = 64;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The first element's opening bytes, from its `{` to its first `:`; null
 * when the first element is not an object or opens with something long.
 */
export function elementSignature(r: ByteReader, open: number): Buffer | null {
  const b = r.read(open + 1, open + 1 + 1024);
  let i = 0;
  while (i < b.length && isSpace(b[i])) i++;
  if (b[i] !== 0x7b) return null;
  const colon = b.indexOf(0x3a, i);
  if (colon < 0 || colon - i >= LONGEST_SIGNATURE) return null;
  return Buffer.from(b.subarray(i, colon + 1));
}

/** The comma before the first place at or after `from` where `signature` follows a comma (and whitespace); -1 if none is near. */
export function guessCut(r: ByteReader, from: number, signature: Buffer): number {
  const b = r.read(from, from + SEARCH_BYTES);
  for (let i = b.indexOf(signature); i >= 0; i = b.indexOf(signature, i + 1)) {
    let j = i - 1;
    while (j >= 0 && isSpace(b[j])) j--;
    if (j >= 0 && b[j] === 0x2c) return from + j;
  }
  return -1;
}
