/**
 * What the build turns into records: rows (a source record, or one element
 * of its `each` array), getters over them, and where a column's path points.
 * Shared by the build and the fast paths that stand in for parts of it.
 */
import type { SourceRecord } from './load.js';
import { isPlainObject } from './schema.js';

/** A row before it becomes a record: a source record, or one element of its `each` array. */
export interface Row {
  readonly rec: SourceRecord;
  /** Index in the `each` array (key in an `each` map); -1 for a row that is the record itself. */
  readonly elem: number | string;
  readonly elemValue: unknown;
}

export type Getter = (row: Row) => unknown;

export function walk(value: unknown, segs: readonly string[]): unknown {
  let cur = value;
  for (const seg of segs) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

export interface Location {
  /** Path from the record root, used to match rejected paths. */
  readonly segs: readonly string[];
  /** The `each` array's path when the path reads the row's element, else undefined. */
  readonly eachSegs: readonly string[] | undefined;
  /** Path from where the walk starts: the element or the record. */
  readonly rest: readonly string[];
}

export function locate(path: string, each: string | undefined): Location {
  const segs = path.split('.');
  const eachSegs = each?.split('.');
  const inElem = eachSegs !== undefined && segs.length > eachSegs.length && eachSegs.every((s, i) => segs[i] === s);
  return { segs, eachSegs: inElem ? eachSegs : undefined, rest: inElem ? segs.slice(eachSegs.length) : segs };
}
