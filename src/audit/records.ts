/**
 * A query result is an array of rows, each an array of values "interpreted
 * with the returnTypes and returnNames of that query" (spec section 2). The
 * records are those rows as objects keyed by returnNames, in column order.
 * A name given twice gets `_2`, `_3`… appended; a value beyond the declared
 * names is keyed `_<index>`; a row shorter than the names gets `null`.
 */
function recordKeys(returnNames: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return returnNames.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name}_${n}`;
  });
}

export function rowsToRecords(
  returnNames: readonly string[],
  rows: readonly (readonly unknown[])[],
): Record<string, unknown>[] {
  const keys = recordKeys(returnNames);
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      record[key] = i < row.length ? row[i] : null;
    });
    for (let i = keys.length; i < row.length; i++) record[`_${i}`] = row[i];
    return record;
  });
}

export interface QueryFileHead {
  /** The query id. */
  readonly query: string;
  readonly name: string;
  /** `--to`, the EndDate of the route. */
  readonly endDate: string;
  /** The body sent: parameter id → value. */
  readonly params: Record<string, unknown>;
  readonly returnNames: readonly string[];
  readonly returnTypes: readonly string[];
}

/**
 * The file `queries-<id>-<to>.json`:
 *
 *   { "query", "name", "endDate", "params", "returnNames", "returnTypes",
 *     "rows": <the response body, byte for byte>, "records": [ {…}, … ] }
 *
 * `rows` is spliced in as the text received (it parsed as JSON), so numbers
 * and spacing are exactly what the service sent; `records` is derived.
 */
export function queryFileText(
  head: QueryFileHead,
  rawRows: string,
  records: readonly Record<string, unknown>[],
): string {
  const start = JSON.stringify(head, null, 2);
  return `${start.slice(0, -2)},\n  "rows": ${rawRows.trim()},\n  "records": ${JSON.stringify(records, null, 2).replace(/\n/g, '\n  ')}\n}\n`;
}
