/**
 * FAST PATH: the unique-string-key sort. Equivalent to building every record
 * and sorting with sortRecords (src/exports/order.ts) when it applies, and
 * says so by returning undefined when it does not (a key value that is not a
 * string, holds U+0000, or repeats), so the caller then takes sortRecords.
 * Differential test: test/unit/fast-paths.test.ts. What it earns:
 * bench/RESULTS.md.
 */

/**
 * The rows in file order when every key value is a string and every key
 * unique: the key columns joined by U+0000 then order exactly as the tuple
 * does under compareValues, and no tie reaches the all-columns comparison.
 */
export function orderByUniqueStringKey<T>(
  rows: readonly T[],
  keyGetters: ReadonlyArray<(row: T) => unknown>,
): T[] | undefined {
  const n = rows.length;
  const keys: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    let k = '';
    for (let c = 0; c < keyGetters.length; c++) {
      const v = keyGetters[c]!(row);
      if (typeof v !== 'string') return undefined;
      if (keyGetters.length === 1) k = v;
      else if (v.includes('\u0000')) return undefined;
      else k = c === 0 ? v : `${k}\u0000${v}`;
    }
    keys[i] = k;
  }
  const order = sortedIndexes(keys);
  for (let i = 1; i < n; i++) if (keys[order[i - 1]!] === keys[order[i]!]) return undefined;
  const out: T[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = rows[order[i]!]!;
  return out;
}

/** Below this many keys a range is finished by insertion sort. */
const SMALL_RANGE = 12;

/**
 * The positions of `keys` in the order of their UTF-16 code units, a prefix
 * before what extends it (the order of `<`): a three-way radix quicksort
 * (Bentley and Sedgewick's multikey quicksort) on charCodeAt. Equal keys end
 * up side by side, in no fixed order.
 */
export function sortedIndexes(keys: readonly string[]): Int32Array {
  const n = keys.length;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  // The character at `depth` of key `i`, or -1 past its end (a prefix first).
  const ch = (i: number, depth: number): number => {
    const s = keys[i]!;
    return depth < s.length ? s.charCodeAt(depth) : -1;
  };
  // Ranges still to sort, as [lo, hi, depth] triples: every key in [lo, hi) shares its first `depth` characters.
  const stack: number[] = [0, n, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    if (hi - lo < 2) continue;
    if (hi - lo < SMALL_RANGE) {
      for (let i = lo + 1; i < hi; i++) {
        const v = idx[i]!;
        const key = keys[v]!;
        let j = i - 1;
        while (j >= lo && keys[idx[j]!]! > key) {
          idx[j + 1] = idx[j]!;
          j--;
        }
        idx[j + 1] = v;
      }
      continue;
    }
    // The pivot character: the median of the range's first, middle and last.
    const a = ch(idx[lo]!, depth);
    const b = ch(idx[(lo + hi) >> 1]!, depth);
    const c = ch(idx[hi - 1]!, depth);
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    // [lo, lt): below the pivot; [lt, gt]: equal to it; (gt, hi): above it.
    let lt = lo;
    let gt = hi - 1;
    let i = lo;
    while (i <= gt) {
      const x = ch(idx[i]!, depth);
      if (x < pivot) {
        const t = idx[lt]!;
        idx[lt++] = idx[i]!;
        idx[i++] = t;
      } else if (x > pivot) {
        const t = idx[gt]!;
        idx[gt--] = idx[i]!;
        idx[i] = t;
      } else i++;
    }
    stack.push(lo, lt, depth);
    // Keys that ended at `depth` (pivot -1) are equal: nothing more to sort among them.
    if (pivot >= 0) stack.push(lt, gt + 1, depth + 1);
    stack.push(gt + 1, hi, depth);
  }
  return idx;
}
