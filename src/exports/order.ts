/**
 * The one ordering of export values: null first, then booleans (false before
 * true), numbers numerically, strings by UTF-16 code unit (no locale), arrays
 * element by element. Independent of locale, time zone and input order.
 */
function rank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'string':
      return 3;
    default:
      return Array.isArray(v) ? 4 : 5;
  }
}

export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  // The common case (ids), without the type ranking.
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : 1;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a ? 1 : -1;
    case 2:
    case 3:
      return order(a as number | string, b as number | string);
    case 4: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    default:
      return order(JSON.stringify(a), JSON.stringify(b));
  }
}

/** Two numbers or two strings as `<` orders them. */
function order(a: number | string, b: number | string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Sorts records in place by the key columns, then (only for equal keys, which
 * a well-behaved backend never sends) by every column, so that the order does
 * not depend on the order of the response. Key values are read once per
 * record, not once per comparison.
 */
export function sortRecords(
  records: Array<Record<string, unknown>>,
  key: readonly string[],
  columns: readonly string[],
): void {
  const entries = records.map((r) => ({ k: key.map((c) => r[c]), r }));
  entries.sort((a, b) => {
    for (let i = 0; i < a.k.length; i++) {
      const c = compareValues(a.k[i], b.k[i]);
      if (c !== 0) return c;
    }
    return compareColumns(a.r, b.r, columns);
  });
  for (let i = 0; i < entries.length; i++) records[i] = entries[i]!.r;
}

function compareColumns(a: Record<string, unknown>, b: Record<string, unknown>, columns: readonly string[]): number {
  for (const col of columns) {
    const c = compareValues(a[col], b[col]);
    if (c !== 0) return c;
  }
  return 0;
}

/** Two records in the order sortRecords puts them in: by the key columns, then by every column. */
export function compareRecords(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  key: readonly string[],
  columns: readonly string[],
): number {
  return compareColumns(a, b, key) || compareColumns(a, b, columns);
}
