/**
 * build(collection): the 15 exports, the nulls manifest, validation and drift
 * from a raw collection. Pure (no I/O, no clock): a live run and a replay of
 * its collection call this same function on the same bytes, so their export
 * files are identical by construction.
 */
import type { RouteDef } from '../api/catalog.js';
import type { RawCollection } from '../collect/types.js';
import { EXPORTS } from './catalog.js';
import type { ColumnDef, ExportDef, Representation } from './define.js';
import { loadCollection, type Path, type RouteGroup, type SourceRecord } from './load.js';
import { sortRecords } from './order.js';
import { resolvePath } from './schema.js';
import type { BuildResult, ExportRecord, ExportResult, NullField } from './types.js';

/** A row before it becomes a record: a source record, or one element of its `each` array. */
interface Row {
  readonly rec: SourceRecord;
  /** Index in the `each` array; -1 for a row that is the record itself. */
  readonly elem: number;
  readonly elemValue: unknown;
}

type Getter = (row: Row) => unknown;
type KeyValue = string | number | boolean;

const NULL_GETTER: Getter = () => null;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function walk(value: unknown, segs: readonly string[]): unknown {
  let cur = value;
  for (const seg of segs) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/**
 * Whether a rejected path covers the value at `path`: the issue is at the
 * value or above it, or (unless only the array's length is read) inside it,
 * e.g. one bad entry of a map column nulls that column.
 */
function isRejected(rejected: readonly Path[], path: Path, inside: boolean): boolean {
  for (const r of rejected) {
    const n = Math.min(r.length, path.length);
    let i = 0;
    while (i < n && r[i] === path[i]) i++;
    if (i === n && (r.length <= path.length || inside)) return true;
  }
  return false;
}

function scalarText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
}

function represent(raw: unknown, as: Representation): unknown {
  switch (as) {
    case 'value':
      // A flat record never holds a nested object; the model rules them out, this keeps it true for any input.
      return raw === null || isPlainObject(raw) ? null : raw;
    case 'entries':
      if (!isPlainObject(raw)) return null;
      return Object.keys(raw)
        .sort()
        .map((k) => `${k}=${scalarText(raw[k])}`);
    case 'count':
      return Array.isArray(raw) ? raw.length : null;
  }
}

interface Location {
  /** Path from the record root, used to match rejected paths. */
  readonly segs: readonly string[];
  /** The `each` array's path when the path reads the row's element, else undefined. */
  readonly eachSegs: readonly string[] | undefined;
  /** Path from where the walk starts: the element or the record. */
  readonly rest: readonly string[];
}

function locate(path: string, each: string | undefined): Location {
  const segs = path.split('.');
  const eachSegs = each?.split('.');
  const inElem = eachSegs !== undefined && segs.length > eachSegs.length && eachSegs.every((s, i) => segs[i] === s);
  return { segs, eachSegs: inElem ? eachSegs : undefined, rest: inElem ? segs.slice(eachSegs.length) : segs };
}

/** The value at a location of a row as received, before validation has a say. */
function rawAt(loc: Location, row: Row): unknown {
  return walk(loc.eachSegs ? row.elemValue : row.rec.value, loc.rest);
}

/** The value at a dotted path of a row, honouring the paths validation rejected. */
function fieldGetter(path: string, as: Representation, each: string | undefined): Getter {
  const loc = locate(path, each);
  const inside = as !== 'count';
  return (row) => {
    const raw = rawAt(loc, row);
    if (raw === undefined) return null;
    const rejected = row.rec.rejected;
    if (rejected && isRejected(rejected, loc.eachSegs ? [...loc.eachSegs, row.elem, ...loc.rest] : loc.segs, inside)) return null;
    return represent(raw, as);
  };
}

function isKeyValue(v: unknown): v is KeyValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** What the derivations read, built once per build: route groups and Map indexes over them. */
class Context {
  private readonly indexes = new Map<string, Map<KeyValue, SourceRecord>>();
  private readonly counts = new Map<string, Map<KeyValue, number>>();

  constructor(readonly groups: ReadonlyMap<string, RouteGroup>) {}

  group(id: string): RouteGroup {
    const g = this.groups.get(id);
    if (!g) throw new Error(`no route ${id}`);
    return g;
  }

  /** The first record of `route` per value of `by` (a duplicate id keeps the first, in response order). */
  index(route: string, by: string): Map<KeyValue, SourceRecord> {
    const id = `${route}\u0000${by}`;
    let index = this.indexes.get(id);
    if (!index) {
      index = new Map();
      const get = fieldGetter(by, 'value', undefined);
      for (const rec of this.group(route).records) {
        const k = get({ rec, elem: -1, elemValue: undefined });
        if (isKeyValue(k) && !index.has(k)) index.set(k, rec);
      }
      this.indexes.set(id, index);
    }
    return index;
  }

  count(route: string, by: string): Map<KeyValue, number> {
    const id = `${route}\u0000${by}`;
    let counts = this.counts.get(id);
    if (!counts) {
      counts = new Map();
      const get = fieldGetter(by, 'value', undefined);
      for (const rec of this.group(route).records) {
        const k = get({ rec, elem: -1, elemValue: undefined });
        if (isKeyValue(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      this.counts.set(id, counts);
    }
    return counts;
  }
}

/** Why a derivation cannot be computed: its route is missing in some realm (or everywhere). */
function derivationGap(group: RouteGroup): { reason: string; proposedRoute?: string } | undefined {
  if (group.missing.length === 0) return undefined;
  const reason = group.missing.map((m) => m.reason).join('; ');
  // Naming the route helps when it was not called or not served; a failure's reason says what to do.
  return group.missing.every((m) => m.skipped) ? { reason, proposedRoute: routeTitle(group.def, group.missing) } : { reason };
}

/** The route as a user would ask for it: its label, or its template when several realms are meant. */
function routeTitle(def: RouteDef, bodies: ReadonlyArray<{ label: string }>): string {
  return bodies.length === 1 ? bodies[0]!.label : `${def.method} ${def.path}`;
}

function compileColumn(exp: ExportDef, col: ColumnDef, ctx: Context): Getter {
  const src = col.source;
  switch (src.kind) {
    case 'field':
      return fieldGetter(src.path, src.as, exp.each);
    case 'realm':
      return (row) => row.rec.realm ?? null;
    case 'unavailable':
      return NULL_GETTER;
    case 'join': {
      if (derivationGap(ctx.group(src.route))) return NULL_GETTER;
      const on = fieldGetter(src.on, 'value', exp.each);
      const index = ctx.index(src.route, src.by);
      const target = fieldGetter(src.path, src.as, undefined);
      return (row) => {
        const k = on(row);
        const rec = isKeyValue(k) ? index.get(k) : undefined;
        return rec ? target({ rec, elem: -1, elemValue: undefined }) : null;
      };
    }
    case 'count': {
      if (derivationGap(ctx.group(src.route))) return NULL_GETTER;
      const on = fieldGetter(src.on, 'value', exp.each);
      const counts = ctx.count(src.route, src.by);
      return (row) => {
        const k = on(row);
        return isKeyValue(k) ? (counts.get(k) ?? 0) : null;
      };
    }
  }
}

function rowsOf(exp: ExportDef, group: RouteGroup): Row[] {
  const rows: Row[] = [];
  if (exp.each === undefined) {
    for (const rec of group.records) rows.push({ rec, elem: -1, elemValue: undefined });
    return rows;
  }
  const segs = exp.each.split('.');
  for (const rec of group.records) {
    const list = walk(rec.value, segs);
    if (!Array.isArray(list)) continue;
    // An issue at the array itself (not inside one element) leaves no members to list.
    if (rec.rejected && isRejected(rec.rejected, segs, false)) continue;
    for (let j = 0; j < list.length; j++) rows.push({ rec, elem: j, elemValue: list[j] });
  }
  return rows;
}

/** Field columns added in backend 3.14.1, from the models' SINCE_3_14_1 (computed once per export). */
const since3141 = new WeakMap<ExportDef, ReadonlyArray<{ col: ColumnDef; path: string }>>();
function since3141Columns(exp: ExportDef, def: RouteDef): ReadonlyArray<{ col: ColumnDef; path: string }> {
  let cols = since3141.get(exp);
  if (!cols) {
    cols = exp.columns.flatMap((col) =>
      col.source.kind === 'field' && resolvePath(def.item, col.source.path, exp.each ? [exp.each] : []).since3141 ? [{ col, path: col.source.path }] : [],
    );
    since3141.set(exp, cols);
  }
  return cols;
}

/**
 * The 3.14.1 columns to list as unobtainable: those of an export none of whose
 * 3.14.1 fields appears in any record, i.e. the backend predates 3.14.1. One
 * 3.14.1 field being present shows a newer backend, on which an absent
 * optional field (snapshotPool) is just absent and not listed.
 */
function missing3141(exp: ExportDef, group: RouteGroup, rows: readonly Row[]): Set<ColumnDef> {
  const cols = since3141Columns(exp, group.def);
  if (rows.length === 0 || cols.length === 0) return new Set();
  const locs = cols.map(({ path }) => locate(path, exp.each));
  const newer = rows.some((row) => locs.some((loc) => rawAt(loc, row) !== undefined));
  return newer ? new Set() : new Set(cols.map((c) => c.col));
}

function nullFieldsOf(exp: ExportDef, group: RouteGroup, rows: readonly Row[], ctx: Context): NullField[] {
  const out: NullField[] = [];
  const missing = missing3141(exp, group, rows);
  for (const col of exp.columns) {
    const src = col.source;
    if (src.kind === 'unavailable') {
      out.push({ export: exp.name, field: col.name, reason: src.reason, ...(src.proposedRoute ? { proposedRoute: src.proposedRoute } : {}) });
    } else if (src.kind === 'join' || src.kind === 'count') {
      const gap = derivationGap(ctx.group(src.route));
      if (gap) out.push({ export: exp.name, field: col.name, ...gap });
    } else if (src.kind === 'field' && missing.has(col)) {
      out.push({
        export: exp.name,
        field: col.name,
        reason: `${src.path} was added in backend 3.14.1, and no record of ${routeTitle(group.def, group.bodies)} carries it or any other 3.14.1 field: the backend predates 3.14.1`,
      });
    }
  }
  return out;
}

/**
 * A function returning a record with the given columns, in order, from an
 * array of values. Generated once per export because an object literal has
 * one fixed shape: building 100k records this way is an order of magnitude
 * faster than assigning computed keys, and serializes faster too. Column
 * names are checked against a strict identifier pattern at catalog load, and
 * are JSON-quoted here besides.
 */
function recordMaker(names: readonly string[]): (values: readonly unknown[]) => ExportRecord {
  const body = `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`;
  return new Function('v', body) as (values: readonly unknown[]) => ExportRecord;
}

function buildExport(exp: ExportDef, ctx: Context): { result: ExportResult; nullFields: NullField[] } {
  const group = ctx.group(exp.route);
  if (group.bodies.length > 0 && group.missing.length === group.bodies.length) {
    const gap = derivationGap(group)!;
    return { result: { export: exp.name, records: [], available: false, ...gap }, nullFields: [] };
  }
  const names = exp.columns.map((c) => c.name);
  const getters = exp.columns.map((c) => compileColumn(exp, c, ctx));
  const make = recordMaker(names);
  const rows = rowsOf(exp, group);
  const values: unknown[] = new Array(names.length);
  const records: ExportRecord[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    for (let c = 0; c < getters.length; c++) values[c] = getters[c]!(row);
    records[i] = make(values);
  }
  sortRecords(records, exp.key, names);
  // Some realms answered and some did not: the export is published with what there is, and says what is missing.
  const partial = group.missing.length > 0 ? { reason: `incomplete: ${group.missing.map((m) => m.reason).join('; ')}` } : {};
  return { result: { export: exp.name, records, available: true, ...partial }, nullFields: nullFieldsOf(exp, group, rows, ctx) };
}

/**
 * Builds all 15 exports in catalog order. `parsed` holds bodies the live run
 * already parsed, by route label; any other body is parsed from its bytes.
 * Neither the collection nor `parsed` is modified.
 */
export function build(collection: RawCollection, parsed?: Map<string, unknown>): BuildResult {
  const loaded = loadCollection(collection, parsed);
  const ctx = new Context(loaded.groups);
  const exports: ExportResult[] = [];
  const nullFields: NullField[] = [];
  for (const exp of EXPORTS) {
    const built = buildExport(exp, ctx);
    exports.push(built.result);
    nullFields.push(...built.nullFields);
  }
  return { exports, nullFields, validation: loaded.validation, drift: loaded.drift };
}
