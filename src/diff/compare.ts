/**
 * The comparison itself: pure, no I/O. Records are matched through a Map
 * keyed by one string per record (the export's key columns, encoded so that
 * no two keys collide), and matched records are compared column by column
 * with `===` first, so that the cost stays close to one pass over each side.
 */
import type { ExportDef } from '../exports/define.js';
import type { ExportRecord } from '../exports/types.js';
import type { Availability, ChangedRecord, ChangeSet, ColumnChange, ExportDiff, LoadedExport, LoadedSide } from './types.js';
import { DIFF_SCHEMA_VERSION } from './types.js';
import type { IgnoreRules } from './ignore.js';

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

type KeyOf = (r: ExportRecord) => string;

function keyFunction(key: readonly string[]): KeyOf {
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
 * Older's records by key, as indexes into `records`. A duplicate key (a
 * backend listing one id twice) gets its occurrence number as one more key
 * part, so that the n-th duplicate on one side is matched with the n-th on
 * the other.
 */
function indexRecords(records: readonly ExportRecord[], keyOf: KeyOf): Map<string, number> {
  const map = new Map<string, number>();
  let dups: Map<string, number> | undefined;
  for (let i = 0; i < records.length; i++) {
    const k = keyOf(records[i]!);
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

/** Exact deep equality of export values: scalars, arrays of scalars (and, defensively, anything JSON). A missing value equals null. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  if (typeof a !== 'object' || typeof b !== 'object' || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

const orNull = (v: unknown): unknown => (v === undefined ? null : v);

type Comparer = (o: ExportRecord, n: ExportRecord) => number[] | undefined;

/**
 * A function returning the indexes of the columns whose values differ, or
 * undefined. Generated once per export (as build.ts generates its record
 * makers): a property read with a constant name is an order of magnitude
 * faster than `record[column]` with a varying name, and this loop runs once
 * per column of every matched record. Names come from the catalog and are
 * JSON-quoted besides.
 */
function comparer(columns: readonly string[]): Comparer {
  const body = columns
    .map((c, i) => {
      const p = `[${JSON.stringify(c)}]`;
      return `a = o${p}; b = n${p}; if (a !== b && !same(a, b)) (d ??= []).push(${i});`;
    })
    .join('\n');
  return new Function('same', `return function compare(o, n) {\nlet a, b, d;\n${body}\nreturn d;\n};`)(sameValue) as Comparer;
}

function availabilityOf(o: boolean, n: boolean): Availability {
  return o ? (n ? 'both' : 'older-only') : n ? 'newer-only' : 'neither';
}

const UNLISTED: LoadedExport = { available: false, reason: 'not listed in the manifest', records: [], nullColumns: new Set() };

function sideInfo(e: LoadedExport) {
  return { available: e.available, count: e.records.length, ...(e.reason !== undefined ? { reason: e.reason } : {}) };
}

/** Columns a side's file does not hold at all (written by another version of the tool): judged by its first record. */
function absentColumns(records: readonly ExportRecord[], columns: readonly string[]): string[] {
  const first = records[0];
  return first ? columns.filter((c) => !Object.hasOwn(first, c)) : [];
}

/**
 * The one matching of records by an export's key (diff and the history
 * database both use it): calls `onMatch` with the older record's index for
 * each newer record that has a partner, `onAdded` for the others, and returns
 * one flag per older record (1 = matched; 0 = removed). The n-th duplicate of
 * a key on one side is matched with the n-th on the other.
 */
export function matchRecords(
  key: readonly string[],
  older: readonly ExportRecord[],
  newer: readonly ExportRecord[],
  onMatch: (olderIndex: number, n: ExportRecord) => void,
  onAdded: (n: ExportRecord) => void,
): Uint8Array {
  const keyOf = keyFunction(key);
  // Only older is indexed: newer is walked once, and a flag per older record says it was matched.
  const olderIndex = indexRecords(older, keyOf);
  const matched = new Uint8Array(older.length);
  let newerDups: Map<string, number> | undefined;
  for (const n of newer) {
    const k = keyOf(n);
    let i = olderIndex.get(k);
    if (i !== undefined && matched[i] === 1) {
      // The key occurred before in newer: this is its n-th occurrence.
      newerDups ??= new Map();
      const count = (newerDups.get(k) ?? 1) + 1;
      newerDups.set(k, count);
      i = olderIndex.get(nth(k, count));
    }
    if (i === undefined) {
      onAdded(n);
      continue;
    }
    matched[i] = 1;
    onMatch(i, n);
  }
  return matched;
}

function diffExport(def: ExportDef, older: LoadedExport, newer: LoadedExport, ignored: ReadonlySet<string> | undefined): ExportDiff {
  const availability = availabilityOf(older.available, newer.available);
  const columns = def.columns.map((c) => c.name);
  const unobtainableSet = new Set<string>();
  const ignoredList: string[] = [];
  if (availability === 'both') {
    const absent = new Set([...absentColumns(older.records, columns), ...absentColumns(newer.records, columns)]);
    for (const c of columns) {
      if (def.key.includes(c)) continue;
      if (older.nullColumns.has(c) || newer.nullColumns.has(c) || absent.has(c)) unobtainableSet.add(c);
      else if (ignored?.has(c)) ignoredList.push(c);
    }
  }
  const base = {
    export: def.name,
    key: [...def.key],
    availability,
    older: sideInfo(older),
    newer: sideInfo(newer),
    unobtainable: columns.filter((c) => unobtainableSet.has(c)),
    ignored: ignoredList,
  };
  if (availability !== 'both') {
    return {
      ...base,
      hasChanges: availability !== 'neither',
      counts: { added: 0, removed: 0, changed: 0, unchanged: 0 },
      added: [],
      removed: [],
      changed: [],
    };
  }
  const compared = columns.filter((c) => !def.key.includes(c) && !unobtainableSet.has(c) && !ignored?.has(c));
  const compare = comparer(compared);
  const added: ExportRecord[] = [];
  const changed: ChangedRecord[] = [];
  let unchanged = 0;
  const matched = matchRecords(def.key, older.records, newer.records, (i, n) => {
    const o = older.records[i]!;
    const differing = compare(o, n);
    if (differing === undefined) {
      unchanged++;
      return;
    }
    const changes: ColumnChange[] = differing.map((c) => {
      const column = compared[c]!;
      return { column, old: orNull(o[column]), new: orNull(n[column]) };
    });
    const key: Record<string, unknown> = {};
    for (const kc of def.key) key[kc] = orNull(n[kc]);
    changed.push({ key, changes });
  }, (n) => added.push(n));
  const removed: ExportRecord[] = [];
  for (let i = 0; i < older.records.length; i++) if (matched[i] === 0) removed.push(older.records[i]!);
  return {
    ...base,
    hasChanges: added.length + removed.length + changed.length > 0,
    counts: { added: added.length, removed: removed.length, changed: changed.length, unchanged },
    added,
    removed,
    changed,
  };
}

/** The change set of two loaded sides, for the given exports (catalog order) and ignore rules. */
export function diffSides(older: LoadedSide, newer: LoadedSide, exports: readonly ExportDef[], ignore: IgnoreRules): ChangeSet {
  const diffs = exports.map((def) =>
    diffExport(def, older.exports.get(def.name) ?? UNLISTED, newer.exports.get(def.name) ?? UNLISTED, ignore.byExport.get(def.name)),
  );
  const totals = { added: 0, removed: 0, changed: 0, exportsChanged: 0 };
  for (const d of diffs) {
    totals.added += d.counts.added;
    totals.removed += d.counts.removed;
    totals.changed += d.counts.changed;
    if (d.hasChanges) totals.exportsChanged++;
  }
  return {
    command: 'diff',
    schemaVersion: DIFF_SCHEMA_VERSION,
    older: older.info,
    newer: newer.info,
    hasChanges: totals.exportsChanged > 0,
    ignore: ignore.list,
    totals,
    exports: diffs,
  };
}
