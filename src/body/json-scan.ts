/**
 * FAST PATH: the JSON byte scanner. Equivalent, where it answers, to
 * JSON.parse of the UTF-8 text followed by the shape check (and the record
 * count); where it does not answer, the caller parses. Differential test:
 * test/unit/bench-json-check.test.ts (every body of the fake site, and
 * random byte soups, against JSON.parse). What it earns: bench/RESULTS.md.
 *
 * Whether a body is JSON (RFC 8259, as JSON.parse reads it) of the expected
 * top-level shape, without building it: the collector checks every body as
 * it arrives, and a lean snapshot parses each body later, once, when it
 * builds from it. Checking is a pass over the bytes that allocates nothing.
 *
 * It never says yes where JSON.parse of the UTF-8 text would fail; where it
 * says no, the caller asks JSON.parse (decodeBody), which gives the verdict
 * and the message. Bytes of 0x80 and above are only accepted inside strings
 * (any sequence there decodes to some string, U+FFFD for a bad one).
 */

const enum C {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

function isWs(c: number): boolean {
  return c === C.Space || c === C.Lf || c === C.Cr || c === C.Tab;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** End of the string starting at `i` (the opening quote), after its closing quote; -1 if invalid. */
function skipString(b: Uint8Array, i: number): number {
  const n = b.length;
  i++;
  for (;;) {
    let c = 0;
    while (i < n && (c = b[i]!) !== C.Quote && c !== C.Backslash && c >= 0x20) i++;
    if (i >= n || c < 0x20) return -1;
    if (c === C.Quote) return i + 1;
    const e = b[i + 1];
    if (e === undefined) return -1;
    if (e === 0x75) {
      if (i + 5 >= n || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1;
      i += 6;
    } else if (
      e === C.Quote ||
      e === C.Backslash ||
      e === 0x2f ||
      e === 0x62 ||
      e === 0x66 ||
      e === 0x6e ||
      e === 0x72 ||
      e === 0x74
    ) {
      i += 2;
    } else {
      return -1;
    }
  }
}

function skipDigits(b: Uint8Array, i: number): number {
  let c: number | undefined;
  while ((c = b[i]) !== undefined && c >= C.Zero && c <= C.Nine) i++;
  return i;
}

/** End of the number starting at `i`; -1 if invalid. */
function skipNumber(b: Uint8Array, i: number): number {
  if (b[i] === C.Minus) i++;
  const first = b[i];
  if (first === C.Zero) i++;
  else if (first !== undefined && first >= 0x31 && first <= C.Nine) i = skipDigits(b, i + 1);
  else return -1;
  if (b[i] === C.Dot) {
    const start = i + 1;
    i = skipDigits(b, start);
    if (i === start) return -1;
  }
  const e = b[i];
  if (e === 0x65 || e === 0x45) {
    i++;
    if (b[i] === C.Plus || b[i] === C.Minus) i++;
    const start = i;
    i = skipDigits(b, start);
    if (i === start) return -1;
  }
  return i;
}

function skipLiteral(b: Uint8Array, i: number, word: readonly number[]): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/**
 * For a body that is JSON whose top level is an array (`shape` 'array') or an
 * object: the number of elements of the array (of members, for an object).
 * Undefined for anything else, or anything this check does not vouch for.
 */
export function checkJson(
  b: Uint8Array,
  shape: 'array' | 'object',
  opts: { objectElements?: boolean } = {},
): number | undefined {
  // With objectElements, a top-level array is vouched for only when every element is an object.
  const objectsOnly = shape === 'array' && opts.objectElements === true;
  const n = b.length;
  let i = 0;
  while (i < n && isWs(b[i]!)) i++;
  if (b[i] !== (shape === 'array' ? C.OpenBracket : C.OpenBrace)) return undefined;
  // Open containers, innermost last: true for an object.
  const stack: boolean[] = [];
  let topLevelItems = 0;
  // What may come next: a value (or, right after an opening bracket/brace, its closing one).
  let expectValue = true;
  let afterOpen = false;
  for (;;) {
    while (i < n && isWs(b[i]!)) i++;
    if (i >= n) return undefined;
    let c = b[i]!;
    if (expectValue) {
      const inObject = stack.length > 0 && stack[stack.length - 1]!;
      if (afterOpen && (c === C.CloseBracket || c === C.CloseBrace)) {
        // An empty container: fall through to the closing logic below.
        if (c !== (inObject ? C.CloseBrace : C.CloseBracket)) return undefined;
      } else {
        if (inObject) {
          // A member: "key" ws : ws value.
          if (c !== C.Quote) return undefined;
          i = skipString(b, i);
          if (i < 0) return undefined;
          while (i < n && isWs(b[i]!)) i++;
          if (b[i] !== C.Colon) return undefined;
          i++;
          while (i < n && isWs(b[i]!)) i++;
          if (i >= n) return undefined;
          c = b[i]!;
        }
        if (stack.length === 1) {
          topLevelItems++;
          if (objectsOnly && c !== C.OpenBrace) return undefined;
        }
        afterOpen = false;
        if (c === C.OpenBracket || c === C.OpenBrace) {
          stack.push(c === C.OpenBrace);
          i++;
          afterOpen = true;
          continue;
        }
        if (c === C.Quote) i = skipString(b, i);
        else if (c === C.Minus || (c >= C.Zero && c <= C.Nine)) i = skipNumber(b, i);
        else if (c === 0x74) i = skipLiteral(b, i, TRUE);
        else if (c === 0x66) i = skipLiteral(b, i, FALSE);
        else if (c === 0x6e) i = skipLiteral(b, i, NULL);
        else return undefined;
        if (i < 0) return undefined;
        expectValue = false;
        continue;
      }
    }
    // After a value (or at an empty container's end): a comma or the container's end.
    if (stack.length === 0) return undefined;
    const inObject = stack[stack.length - 1]!;
    if (c === C.Comma && !afterOpen) {
      i++;
      expectValue = true;
      continue;
    }
    if (c !== (inObject ? C.CloseBrace : C.CloseBracket)) return undefined;
    stack.pop();
    i++;
    afterOpen = false;
    expectValue = false;
    if (stack.length === 0) {
      while (i < n && isWs(b[i]!)) i++;
      return i === n ? topLevelItems : undefined;
    }
  }
}
