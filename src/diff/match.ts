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
 * For each newer key, the index of the older one equal to it, or -1, when
 * both sides' keys are strictly increasing (export files are sorted by key,
 * and plain string keys sort as their strings): then no key occurs twice,
 * and a merge of the two sides, cheaper than a Map of older, matches as the
 * Map would. Undefined otherwise.
 */
function mergePartners(older: readonly string[], newer: readonly string[]): Int32Array | undefined {
  for (let i = 1; i < older.length; i++) if (!(older[i - 1]! < older[i]!)) return undefined;
  for (let j = 1; j < newer.length; j++) if (!(newer[j - 1]! < newer[j]!)) return undefined;
  const partners = new Int32Array(newer.length);
  let i = 0;
  for (let j = 0; j < newer.length; j++) {
    const k = newer[j]!;
    while (i < older.length && older[i]! < k) i++;
    partners[j] = i < older.length && older[i] === k ? i++ : -1;
  }
  return partners;
}

/** For each newer key, the index of its older partner or -1, by a Map of older: where mergePartners cannot say. */
function mapPartners(older: readonly string[], newer: readonly string[]): Int32Array {
  // Only older is indexed: newer is walked once, and a flag per older record says it was matched.
  const olderIndex = indexKeys(older);
  const taken = new Uint8Array(older.length);
  const partners = new Int32Array(newer.length);
  let newerDups: Map<string, number> | undefined;
  for (let j = 0; j < newer.length; j++) {
    const k = newer[j]!;
    let i = olderIndex.get(k);
    if (i !== undefined && taken[i] === 1) {
      // The key occurred before in newer: this is its n-th occurrence.
      newerDups ??= new Map();
      const count = (newerDups.get(k) ?? 1) + 1;
      newerDups.set(k, count);
      i = olderIndex.get(nth(k, count));
    }
    if (i !== undefined) taken[i] = 1;
    partners[j] = i ?? -1;
  }
  return partners;
}

/**
 * Calls `onMatch` with the older and the newer index of each newer record
 * whose partner (older index, or -1) is given, in newer's order, `onAdded`
 * with the index of each other one, and returns one flag per older record
 * (1 = matched; 0 = removed).
 */
export function matchPartners(
  partners: Int32Array,
  olderCount: number,
  onMatch: (olderIndex: number, newerIndex: number) => void,
  onAdded: (newerIndex: number) => void,
): Uint8Array {
  const matched = new Uint8Array(olderCount);
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

/** matchPartners of two sides' keys: the n-th duplicate of a key on one side is matched with the n-th on the other. */
export function matchKeys(
  older: readonly string[],
  newer: readonly string[],
  onMatch: (olderIndex: number, newerIndex: number) => void,
  onAdded: (newerIndex: number) => void,
): Uint8Array {
  return matchPartners(mergePartners(older, newer) ?? mapPartners(older, newer), older.length, onMatch, onAdded);
}
