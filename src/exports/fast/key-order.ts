/**
 * FAST PATH: the unique-string-key sort. Equivalent to building every record
 * and sorting with sortRecords (src/exports/order.ts) when it applies, and
 * says so by returning undefined when it does not (a key value that is not a
 * string, holds U+0000, or repeats), so the caller then takes sortRecords.
 *
 * Held by test/unit/fast-paths.test.ts (against sortRecords on random keys,
 * and the build with it off and on); off: FAST_PATHS.keyOrder. What it
 * earns: docs/architecture.md (measured by bench/fast-paths.ts).
 */

/**
 * The rows in file order when the common case holds: every key value a
 * string and every key unique. Then the key columns joined by U+0000 (when no
 * value holds one) order exactly as the tuple does under compareValues
 * (UTF-16 code units, a prefix first), and no tie ever reaches the
 * all-columns comparison, so the order is sortRecords' without building a
 * record first. Undefined when the case does not apply.
 */
export function orderByUniqueStringKey<T>(rows: readonly T[], keyGetters: ReadonlyArray<(row: T) => unknown>): T[] | undefined {
  const n = rows.length;
  const entries: Array<{ k: string; row: T }> = new Array(n);
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
    entries[i] = { k, row };
  }
  entries.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  for (let i = 1; i < n; i++) if (entries[i - 1]!.k === entries[i]!.k) return undefined;
  const out: T[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = entries[i]!.row;
  return out;
}
