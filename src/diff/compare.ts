/**
 * The comparison itself: pure, no I/O. Records are matched by one string per
 * record (the export's key columns, encoded so that no two keys collide; see
 * match.ts), and matched records are compared column by column with `===`
 * first, so that the cost stays close to one pass over each side. Two
 * snapshot export files are compared from their bytes (bytes.ts): only the
 * records that differ are parsed.
 */
import type { ExportDef } from '../exports/define.js';
import type { ExportRecord } from '../exports/types.js';
import type {
  Availability,
  ChangedRecord,
  ChangeSet,
  ColumnChange,
  DiffSide,
  ExportDiff,
  ExportFile,
  LoadedExport,
} from './types.js';
import { DIFF_SCHEMA_VERSION } from './types.js';
import type { IgnoreRules } from './ignore.js';
import { keyFunction, matchKeys, matchPartners } from './match.js';
import { keyAt, matchRecordKeys, parseRecord, readKeys, sameBytes, type RecordKeys } from './bytes.js';
import { walkNewer } from './walk-newer.js';
import { recordRanges, type RecordRanges } from '../snapshot/records.js';

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
    if (!Object.hasOwn(b, k) || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
      return false;
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
  return new Function('same', `return function compare(o, n) {\nlet a, b, d;\n${body}\nreturn d;\n};`)(
    sameValue,
  ) as Comparer;
}

/** What an export diff says of one side: its records' count and its first record (unobtainable columns are judged by it). */
interface SideView {
  readonly count: number;
  readonly first: ExportRecord | undefined;
}

const viewOf = (records: readonly ExportRecord[]): SideView => ({ count: records.length, first: records[0] });

function sideInfo(e: LoadedExport, view: SideView) {
  return { available: e.available, count: view.count, ...(e.reason !== undefined ? { reason: e.reason } : {}) };
}

/** Columns a side's file does not hold at all (written by another version of the tool): judged by its first record. */
function absentColumns(first: ExportRecord | undefined, columns: readonly string[]): string[] {
  return first ? columns.filter((c) => !Object.hasOwn(first, c)) : [];
}

/** An export diff without its records: availability, counts of each side, and the columns compared. */
function exportHeader(
  def: ExportDef,
  older: LoadedExport,
  newer: LoadedExport,
  olderView: SideView,
  newerView: SideView,
  ignored: ReadonlySet<string> | undefined,
) {
  const [o, n] = [older.available, newer.available];
  const availability: Availability = o ? (n ? 'both' : 'older-only') : n ? 'newer-only' : 'neither';
  const columns = def.columns.map((c) => c.name);
  const unobtainableSet = new Set<string>();
  const ignoredList: string[] = [];
  if (availability === 'both') {
    const absent = new Set([...absentColumns(olderView.first, columns), ...absentColumns(newerView.first, columns)]);
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
    older: sideInfo(older, olderView),
    newer: sideInfo(newer, newerView),
    unobtainable: columns.filter((c) => unobtainableSet.has(c)),
    ignored: ignoredList,
  };
  const compared = columns.filter((c) => !def.key.includes(c) && !unobtainableSet.has(c) && !ignored?.has(c));
  return { base, compared };
}

type Header = ReturnType<typeof exportHeader>['base'];

function withRecords(
  base: Header,
  added: ExportRecord[],
  removed: ExportRecord[],
  changed: ChangedRecord[],
  unchanged: number,
): ExportDiff {
  return {
    ...base,
    hasChanges: added.length + removed.length + changed.length > 0,
    counts: { added: added.length, removed: removed.length, changed: changed.length, unchanged },
    added,
    removed,
    changed,
  };
}

/** An export diff's records as they are found: the added ones, and each matched pair as changed or unchanged. */
function tally(key: readonly string[], compared: readonly string[]) {
  const compare = comparer(compared);
  const t = {
    added: [] as ExportRecord[],
    changed: [] as ChangedRecord[],
    unchanged: 0,
    /** A matched pair: changed when a compared column differs. */
    pair(o: ExportRecord, n: ExportRecord): void {
      const differing = compare(o, n);
      if (differing === undefined) {
        t.unchanged++;
        return;
      }
      const changes: ColumnChange[] = differing.map((c) => {
        const column = compared[c]!;
        return { column, old: orNull(o[column]), new: orNull(n[column]) };
      });
      const k: Record<string, unknown> = {};
      for (const kc of key) k[kc] = orNull(n[kc]);
      t.changed.push({ key: k, changes });
    },
  };
  return t;
}

/** The diff of two parsed sides (a raw collection's, or a snapshot's export file parsed whole). */
function diffRecords(
  def: ExportDef,
  older: LoadedExport,
  newer: LoadedExport,
  ignored: ReadonlySet<string> | undefined,
): ExportDiff {
  const { base, compared } = exportHeader(def, older, newer, viewOf(older.records), viewOf(newer.records), ignored);
  if (base.availability !== 'both')
    return { ...withRecords(base, [], [], [], 0), hasChanges: base.availability !== 'neither' };
  const t = tally(def.key, compared);
  const keyOf = keyFunction(def.key);
  const matched = matchKeys(
    older.records.map(keyOf),
    newer.records.map(keyOf),
    (i, j) => t.pair(older.records[i]!, newer.records[j]!),
    (j) => t.added.push(newer.records[j]!),
  );
  const removed = older.records.filter((_, i) => matched[i] === 0);
  return withRecords(base, t.added, removed, t.changed, t.unchanged);
}

/**
 * The diff of two snapshot export files from their bytes (bytes.ts), the
 * same as diffRecords of the files parsed: records are matched by the keys
 * read from their bytes, a matched pair of the same bytes is unchanged, and
 * only the other records are parsed (each checked to have the key read
 * from it). Undefined where a file is not in the serializer's layout, or
 * does not hold the manifest's count of records, or a record read does not
 * parse or has another key: the caller then parses the files whole.
 */
function diffFiles(
  def: ExportDef,
  older: LoadedExport,
  a: ExportFile,
  newer: LoadedExport,
  b: ExportFile,
  ignored: ReadonlySet<string> | undefined,
): ExportDiff | undefined {
  const ra = recordRanges(a.bytes);
  if (ra?.starts.length !== a.count) return undefined;
  const same = a.bytes.equals(b.bytes);
  const keysA = same ? undefined : readKeys(a.bytes, ra, def.key);
  // Most of two nights' records are the same bytes: the newer file is read only where it differs (walkNewer), else whole.
  const walk = keysA ? walkNewer(keysA, ra, a.count, b.bytes, b.count, def.key) : undefined;
  const rb = same ? ra : walk ? walk.ranges : recordRanges(b.bytes);
  if (!rb || rb.starts.length !== b.count) return undefined;
  const firstA = a.count > 0 ? parseRecord<ExportRecord>(a.bytes, ra, 0) : undefined;
  const firstB = same ? firstA : b.count > 0 ? parseRecord<ExportRecord>(b.bytes, rb, 0) : undefined;
  if ((a.count > 0 && firstA === undefined) || (b.count > 0 && firstB === undefined)) return undefined;
  const { base, compared } = exportHeader(
    def,
    older,
    newer,
    { count: a.count, first: firstA },
    { count: b.count, first: firstB },
    ignored,
  );
  // The same bytes: each record is matched with itself.
  if (same) return withRecords(base, [], [], [], a.count);
  const keysB = keysA && (walk ? walk.keys : readKeys(b.bytes, rb, def.key));
  if (!keysA || !keysB) return undefined;
  const keyOf = keyFunction(def.key);
  let ok = true;
  const parsed = (keys: RecordKeys, ranges: RecordRanges, i: number): ExportRecord | undefined => {
    const r = parseRecord<ExportRecord>(keys.bytes, ranges, i);
    if (r !== undefined && keyOf(r) === keyAt(keys, i)) return r;
    ok = false;
    return undefined;
  };
  const t = tally(def.key, compared);
  const onMatch = (i: number, j: number) => {
    if (!ok) return;
    if (walk ? walk.same[j] === 1 : sameBytes(a.bytes, ra, i, b.bytes, rb, j)) {
      t.unchanged++;
      return;
    }
    const o = parsed(keysA, ra, i);
    const n = parsed(keysB, rb, j);
    if (o !== undefined && n !== undefined) t.pair(o, n);
  };
  const onAdded = (j: number) => {
    const n = ok ? parsed(keysB, rb, j) : undefined;
    if (n !== undefined) t.added.push(n);
  };
  const matched = walk
    ? matchPartners(walk.match, a.count, onMatch, onAdded)
    : matchRecordKeys(keysA, a.count, keysB, b.count, onMatch, onAdded);
  if (!matched) return undefined;
  const removed: ExportRecord[] = [];
  for (let i = 0; ok && i < a.count; i++) {
    if (matched[i] !== 0) continue;
    const o = parsed(keysA, ra, i);
    if (o !== undefined) removed.push(o);
  }
  return ok ? withRecords(base, t.added, removed, t.changed, t.unchanged) : undefined;
}

/** A side with its export file, if any, parsed whole (today's errors for a damaged file). */
function parsedSide(e: LoadedExport): LoadedExport {
  return e.file ? { ...e, records: e.file.parse() } : e;
}

/** The diff of one export, its two sides loaded. */
export function diffExport(
  def: ExportDef,
  older: LoadedExport,
  newer: LoadedExport,
  ignored: ReadonlySet<string> | undefined,
): ExportDiff {
  if (older.available && newer.available && older.file && newer.file) {
    const d = diffFiles(def, older, older.file, newer, newer.file, ignored);
    if (d) return d;
  }
  return diffRecords(def, parsedSide(older), parsedSide(newer), ignored);
}

/** The change set of two sides' export diffs (catalog order) and ignore rules. */
export function changeSetOf(older: DiffSide, newer: DiffSide, diffs: ExportDiff[], ignore: IgnoreRules): ChangeSet {
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
    older,
    newer,
    hasChanges: totals.exportsChanged > 0,
    ignore: ignore.list,
    totals,
    exports: diffs,
  };
}
