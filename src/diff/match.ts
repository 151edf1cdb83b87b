/**
 * Matching records by an export's key, on the key strings alone: the diff of
 * parsed records (compare.ts) and the diff of export files read as bytes
 * (bytes.ts) share it, so that both match exactly alike.
 */
import type { ExportRecord } from '../exports/types.js';

/**
 * One key part as a string without NUL: plain strings as they are (the
 * common case: ids), anything else tagged. A string is plain when it holds
 * no NUL and does not start with one of the tags \u0001 and \u0002.
 */
function keyPart(v: unknown): string {
  if (typeof v === 'string') {
    const c = v.charCodeAt(0);
    if (c > 2 && !v.includes('\u0000')) return v;
    return `\u0002${JSON.stringify(v)}`;
  }
  return `\u0001${JSON.stringify(v === undefined ? null : v)}`;
}

/** The key of the record whose key columns hold `values` (undefined: the column is absent). */
export function keyOfValues(values: readonly unknown[]): string {
  let s = keyPart(values[0]);
  for (let i = 1; i < values.length; i++) s += `\u0000${keyPart(values[i])}`;
  return s;
}

export type KeyOf = (r: ExportRecord) => string;

/** One string per record, for the key columns `key`: records with equal key values, and only they, get equal strings. */
export function keyFunction(key: readonly string[]): KeyOf {
  if (key.length === 1) {
    const k = key[0]!;
    return (r) => keyPart(r[k]);
  }
  return (r) => {
    let s = keyPart(r[key[0]!]);
    for (let i = 1; i < key.length; i++) s += `\u0000${keyPart(r[key[i]!])}`;
    return s;
  };
}

/** The n-th (n ≥ 2) record with key `k` on one side: one more key part, which no plain key has. */
const nth = (k: string, n: number) => `${k}\u0000#${n}`;

/**
 * Older's records by key, as indexes. A duplicate key (a backend listing one
 * id twice) gets its occurrence number as one more key part, so that the
 * n-th duplicate on one side is matched with the n-th on the other.
 */
function indexKeys(keys: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  let dups: Map<string, number> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (!map.has(k)) {
      map.set(k, i);
      continue;
    }
    dups ??= new Map();
    const n = (dups.get(k) ?? 1) + 1;
    dups.set(k, n);
    map.set(nth(k, n), i);
  }
  return map;
}

/**
 * For each newer record, the index of the older one with the same key, or
 * -1, by a merge of the two sides (cheaper than a Map of older) when both
 * are strictly increasing under `compare` (export files are sorted by key):
 * then no key occurs twice, and the merge matches as matchKeys would.
 * Undefined otherwise. `compare(i, j)` orders older record i and newer
 * record j, `olderAscends(i)` says older i-1 comes before older i, and
 * `newerAscends(j)` likewise for newer; equal under `compare` must mean
 * equal keys.
 */
export function mergePartners(
  olderLength: number,
  newerLength: number,
  compare: (i: number, j: number) => number,
  olderAscends: (i: number) => boolean,
  newerAscends: (j: number) => boolean,
): Int32Array | undefined {
  for (let i = 1; i < olderLength; i++) if (!olderAscends(i)) return undefined;
  for (let j = 1; j < newerLength; j++) if (!newerAscends(j)) return undefined;
  const partners = new Int32Array(newerLength);
  let i = 0;
  for (let j = 0; j < newerLength; j++) {
    let c = -1;
    while (i < olderLength && (c = compare(i, j)) < 0) i++;
    partners[j] = i < olderLength && c === 0 ? i++ : -1;
  }
  return partners;
}

/** Calls matchKeys' callbacks for the partners mergePartners found, and returns its flags. */
export function emitPartners(
  partners: Int32Array,
  olderLength: number,
  onMatch: (olderIndex: number, newerIndex: number) => void,
  onAdded: (newerIndex: number) => void,
): Uint8Array {
  const matched = new Uint8Array(olderLength);
  for (let j = 0; j < partners.length; j++) {
    const i = partners[j]!;
    if (i < 0) {
      onAdded(j);
      continue;
    }
    matched[i] = 1;
    onMatch(i, j);
  }
  return matched;
}

/**
 * Calls `onMatch` with the older and the newer index of each newer record
 * that has a partner (in newer's order), `onAdded` with the index of each
 * other one, and returns one flag per older record (1 = matched; 0 =
 * removed). The n-th duplicate of a key on one side is matched with the
 * n-th on the other.
 */
export function matchKeys(
  older: readonly string[],
  newer: readonly string[],
  onMatch: (olderIndex: number, newerIndex: number) => void,
  onAdded: (newerIndex: number) => void,
): Uint8Array {
  // Plain string keys sort as their strings.
  const partners = mergePartners(
    older.length,
    newer.length,
    (i, j) => (older[i]! < newer[j]! ? -1 : older[i] === newer[j] ? 0 : 1),
    (i) => older[i - 1]! < older[i]!,
    (j) => newer[j - 1]! < newer[j]!,
  );
  if (partners) return emitPartners(partners, older.length, onMatch, onAdded);
  // Only older is indexed: newer is walked once, and a flag per older record says it was matched.
  const matched = new Uint8Array(older.length);
  const olderIndex = indexKeys(older);
  let newerDups: Map<string, number> | undefined;
  for (let j = 0; j < newer.length; j++) {
    const k = newer[j]!;
    let i = olderIndex.get(k);
    if (i !== undefined && matched[i] === 1) {
      // The key occurred before in newer: this is its n-th occurrence.
      newerDups ??= new Map();
      const count = (newerDups.get(k) ?? 1) + 1;
      newerDups.set(k, count);
      i = olderIndex.get(nth(k, count));
    }
    if (i === undefined) {
      onAdded(j);
      continue;
    }
    matched[i] = 1;
    onMatch(i, j);
  }
  return matched;
}
