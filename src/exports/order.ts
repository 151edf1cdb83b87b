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
      return (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0;
    case 4: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    default: {
      const sa = JSON.stringify(a);
      const sb = JSON.stringify(b);
      return sa < sb ? -1 : sa > sb ? 1 : 0;
    }
  }
}

/**
 * Compares records by the key columns, then (only for equal keys, which a
 * well-behaved backend never sends) by every column, so that the order does
 * not depend on the order of the response.
 */
export function recordComparator(key: readonly string[], columns: readonly string[]): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
  return (a, b) => {
    for (const k of key) {
      const c = compareValues(a[k], b[k]);
      if (c !== 0) return c;
    }
    for (const k of columns) {
      const c = compareValues(a[k], b[k]);
      if (c !== 0) return c;
    }
    return 0;
  };
}
