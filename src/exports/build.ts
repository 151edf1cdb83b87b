/**
 * build(collection, memory, include): the exports one at a time, then the
 * nulls manifest, validation and drift, from a raw collection. No I/O, no clock:
 * a live run and a replay of its collection call this same function on the
 * same bytes, so their export files are identical by construction. The one
 * effect on its input is the memory policy's to allow: with consumeBodies,
 * each body is deleted from the collection once read.
 */
import { ROUTES, type RouteDef } from '../api/catalog.js';
import type { RawCollection } from '../collect/types.js';
import { exportsFor } from './catalog.js';
import type { RealmsRecord, RouteRecord } from '../api/route-record.js';
import type { Include } from '../includes.js';
import { derivedRoutes, type ColumnDef, type ColumnDefault, type ExportDef, type Representation } from './define.js';
import { CollectionReader, memo, type Path, type RouteGroup, type SourceRecord } from './load.js';
import { KEEP_EVERYTHING, type MemoryPolicy } from './memory-policy.js';
import { sortRecords } from './order.js';
import { orderByUniqueStringKey } from './fast/key-order.js';
import { plainRecordMaker, recordMaker } from './fast/record-maker.js';
import { resolvePath } from './schema.js';
import { isRecord } from '../body/decode.js';
import type { BuildOptions, BuildResult, ExportRecord, ExportResult, NullField } from './types.js';

/** A row before it becomes a record: a source record, or one element of its `each` array. */
interface Row {
  readonly rec: SourceRecord;
  /** Index in the `each` array (key in an `each` map); -1 for a row that is the record itself. */
  readonly elem: number | string;
  readonly elemValue: unknown;
}

type Getter = (row: Row) => unknown;

function walk(value: unknown, segs: readonly string[]): unknown {
  let cur = value;
  for (const seg of segs) {
    if (!isRecord(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
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

type KeyValue = string | number | boolean;

/** Per key value, the first record holding it and how many do. */
type KeyIndex = Map<KeyValue, { first: SourceRecord; count: number }>;

const NULL_GETTER: Getter = () => null;

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
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

type Frame =
  | { readonly obj: Record<string, unknown>; readonly keys: string[]; i: number }
  | { readonly arr: unknown[]; i: number };

/**
 * JSON text with object keys sorted at every level (UTF-16 order), so that
 * equal objects give equal texts; otherwise what JSON.stringify writes for a
 * parsed JSON value. Iterative, not recursive: a hostile server may nest a
 * settings object deeper than the call stack reaches, which would make
 * JSON.stringify throw.
 */
export function sortedJson(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (v: unknown): void => {
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ arr: v, i: 0 });
    } else if (isRecord(v)) {
      out.push('{');
      stack.push({ obj: v, keys: Object.keys(v).sort(), i: 0 });
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  };
  open(root);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if ('arr' in f) {
      if (f.i === f.arr.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (f.i > 0) out.push(',');
      open(f.arr[f.i++]);
    } else {
      if (f.i === f.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const k = f.keys[f.i++]!;
      out.push(`${f.i > 1 ? ',' : ''}${JSON.stringify(k)}:`);
      open(f.obj[k]);
    }
  }
  return out.join('');
}

function represent(raw: unknown, as: Representation): unknown {
  switch (as) {
    case 'json':
      return isRecord(raw) ? sortedJson(raw) : null;
    case 'value':
      // A flat record never holds a nested object; the model rules them out, this keeps it true for any input.
      return raw === null || isRecord(raw) ? null : raw;
    case 'entries':
      if (!isRecord(raw)) return null;
      return Object.keys(raw)
        .sort()
        .map((k) => `${k}=${scalarText(raw[k])}`);
    case 'count':
      return Array.isArray(raw) ? raw.length : null;
  }
}

/** The value at a location of a row as received, before validation has a say. */
function rawAt(loc: Location, row: Row): unknown {
  return walk(loc.eachSegs ? row.elemValue : row.rec.value, loc.rest);
}

/** What an absent value becomes: the column's documented default where it applies, else null. */
function absentGetter(d: ColumnDefault | undefined, loc: Location, each: string | undefined): Getter {
  if (!d) return NULL_GETTER;
  // A field directly under the record (or the element) always has its holder.
  const holder =
    (d.scope ?? 'parent') === 'parent' && loc.rest.length > 1 ? { ...loc, rest: loc.rest.slice(0, -1) } : undefined;
  const by = d.by !== undefined ? fieldGetter(d.by, 'value', each) : undefined;
  return (row) => {
    if (holder && !isRecord(rawAt(holder, row))) return null;
    if (by && d.cases) {
      const k = by(row);
      if (typeof k === 'string' && Object.hasOwn(d.cases, k)) return d.cases[k];
    }
    return d.value;
  };
}

/**
 * The value at a dotted path of a row, honouring the paths validation
 * rejected: a rejected value is null even where a default would apply, since
 * it was sent, just not of the documented type.
 */
function fieldGetter(path: string, as: Representation, each: string | undefined, dflt?: ColumnDefault): Getter {
  const loc = locate(path, each);
  const inside = as !== 'count';
  const absent = absentGetter(dflt, loc, each);
  return (row) => {
    const rejected = row.rec.rejected;
    if (rejected && isRejected(rejected, loc.eachSegs ? [...loc.eachSegs, row.elem, ...loc.rest] : loc.segs, inside))
      return null;
    const raw = rawAt(loc, row);
    return raw === undefined ? absent(row) : represent(raw, as);
  };
}

/** The row that is the record itself. */
function recordRow(rec: SourceRecord): Row {
  return { rec, elem: -1, elemValue: undefined };
}

function isKeyValue(v: unknown): v is KeyValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** What the derivations read, built once per build: route groups and Map indexes over them. */
class Context {
  private readonly indexes = new Map<string, KeyIndex>();

  constructor(
    private readonly reader: CollectionReader,
    /** The backend's release as its 3.14.1 routes showed it. */
    readonly backend: BackendRelease,
    /** The collection's realm list and where it came from (GET /api/realms or --realms). */
    readonly realms: RealmsRecord,
  ) {}

  group(id: string): RouteGroup {
    return this.reader.group(id);
  }

  /** Drops a route's records and the indexes holding them, once no later export reads them. */
  release(route: string): void {
    for (const id of this.indexes.keys()) if (id.startsWith(`${route}\u0000`)) this.indexes.delete(id);
    this.reader.release(route);
  }

  /** The records of `route` by their value of `by` (a duplicate id joins the first, in response order). */
  index(route: string, by: string): KeyIndex {
    return memo(this.indexes, `${route}\u0000${by}`, () => {
      const out: KeyIndex = new Map();
      const get = fieldGetter(by, 'value', undefined);
      for (const rec of this.group(route).records) {
        const k = get(recordRow(rec));
        if (!isKeyValue(k)) continue;
        const seen = out.get(k);
        if (seen) seen.count++;
        else out.set(k, { first: rec, count: 1 });
      }
      return out;
    });
  }
}

/** Why a derivation cannot be computed: its route is missing in some realm (or everywhere). */
function derivationGap(group: RouteGroup): { reason: string; proposedRoute?: string } | undefined {
  if (group.missing.length === 0) return undefined;
  const reason = group.missing.map((m) => m.reason).join('; ');
  // Naming the route helps when it was not called or not served; a failure's reason says what to do.
  return group.missing.every((m) => m.skipped)
    ? { reason, proposedRoute: routeTitle(group.def, group.missing) }
    : { reason };
}

/** The route as a user would ask for it: its label, or its template when several realms are meant. */
function routeTitle(def: RouteDef, bodies: ReadonlyArray<{ label: string }>): string {
  return bodies.length === 1 ? bodies[0]!.label : `${def.method} ${def.path}`;
}

function compileColumn(exp: ExportDef, col: ColumnDef, ctx: Context): Getter {
  const src = col.source;
  switch (src.kind) {
    case 'field':
      return fieldGetter(src.path, src.as, exp.each, col.default);
    case 'realm':
      return (row) => row.rec.realm ?? null;
    case 'unavailable':
      return NULL_GETTER;
    case 'equals': {
      const a = fieldGetter(src.path, 'value', exp.each);
      const b = fieldGetter(src.other, 'value', undefined);
      return (row) => {
        const x = a(row);
        const y = b(row);
        return x === null || y === null ? null : x === y;
      };
    }
    case 'join':
    case 'count': {
      if (derivationGap(ctx.group(src.route))) return NULL_GETTER;
      const on = fieldGetter(src.on, 'value', exp.each);
      const index = ctx.index(src.route, src.by);
      if (src.kind === 'count')
        return (row) => {
          const k = on(row);
          return isKeyValue(k) ? (index.get(k)?.count ?? 0) : null;
        };
      const target = fieldGetter(src.path, src.as, undefined, col.default);
      // The route was read: a row with nothing to join has the default where it reaches that far.
      const unmatched = col.default?.scope === 'row' ? col.default.value : null;
      return (row) => {
        const k = on(row);
        const rec = isKeyValue(k) ? index.get(k)?.first : undefined;
        return rec ? target(recordRow(rec)) : unmatched;
      };
    }
  }
}

function rowsOf(exp: ExportDef, group: RouteGroup): Row[] {
  if (exp.each === undefined) return group.records.map(recordRow);
  const rows: Row[] = [];
  const segs = exp.each.split('.');
  for (const rec of group.records) {
    const list = walk(rec.value, segs);
    if (!Array.isArray(list) && !isRecord(list)) continue;
    // An issue at the array itself (not inside one element) leaves no members to list.
    if (rec.rejected && isRejected(rec.rejected, segs, false)) continue;
    if (Array.isArray(list)) for (let j = 0; j < list.length; j++) rows.push({ rec, elem: j, elemValue: list[j] });
    // A map of objects (the realms of GET /api/realms): one row per value.
    else for (const k of Object.keys(list)) rows.push({ rec, elem: k, elemValue: list[k] });
  }
  return rows;
}

/** Field columns added in backend 3.14.1, from the models' SINCE_3_14_1 (computed once per export). */
const since3141 = new Map<ExportDef, ReadonlyArray<{ col: ColumnDef; path: string }>>();
function since3141Columns(exp: ExportDef, def: RouteDef): ReadonlyArray<{ col: ColumnDef; path: string }> {
  return memo(since3141, exp, () =>
    exp.columns.flatMap((col) =>
      col.source.kind === 'field' && resolvePath(def.item, col.source.path, exp.each).since3141
        ? [{ col, path: col.source.path }]
        : [],
    ),
  );
}

/**
 * The 3.14.1 columns to list as unobtainable, and why. On a backend whose
 * 3.14.1 routes answered 404, every 3.14.1 field no record carries (one that
 * some record carries is data, and stays). On a 3.14.1 backend, none: a field
 * no record carries is just absent (images that predate `secureBoot`). When
 * no 3.14.1 route was answered at all (no token of their types), the release
 * is unknown: the fields are listed only if no record carries any 3.14.1
 * field of the export, and the reason says the release is unknown.
 */
function missing3141(
  exp: ExportDef,
  group: RouteGroup,
  rows: readonly Row[],
  release: BackendRelease,
): Map<ColumnDef, string> {
  const out = new Map<ColumnDef, string>();
  const cols = since3141Columns(exp, group.def);
  if (release === '3.14.1+' || cols.length === 0) return out;
  const carried = cols.map(({ path }) => {
    const loc = locate(path, exp.each);
    return rows.some((row) => rawAt(loc, row) !== undefined);
  });
  if (release === 'unknown' && carried.some(Boolean)) return out;
  const where = routeTitle(group.def, group.bodies);
  cols.forEach(({ col, path }, i) => {
    if (carried[i]) return;
    out.set(
      col,
      release === 'before 3.14.1'
        ? `${path} was added in backend 3.14.1, and this backend predates it (its 3.14.1 routes answer 404)`
        : `${path} was added in backend 3.14.1; no record of ${where} carries it or any other 3.14.1 field, and the ` +
            `backend's release is unknown (no 3.14.1 route was answered)`,
    );
  });
  return out;
}

function nullFieldsOf(exp: ExportDef, group: RouteGroup, rows: readonly Row[], ctx: Context): NullField[] {
  const out: NullField[] = [];
  const missing = missing3141(exp, group, rows, ctx.backend);
  for (const col of exp.columns) {
    const src = col.source;
    if (src.kind === 'unavailable') {
      out.push({
        export: exp.name,
        field: col.name,
        reason: src.reason,
        ...(src.proposedRoute ? { proposedRoute: src.proposedRoute } : {}),
      });
    } else if (src.kind === 'join' || src.kind === 'count') {
      const gap = derivationGap(ctx.group(src.route));
      if (gap) out.push({ export: exp.name, field: col.name, ...gap });
    } else if (src.kind === 'field' && missing.has(col)) {
      out.push({ export: exp.name, field: col.name, reason: missing.get(col)! });
    }
  }
  return out;
}

/** One export, ready to be written: what the manifest says of it, and its records on demand. */
export interface BuiltExport extends Omit<ExportResult, 'records'> {
  /** Its position in the catalog (the build yields exports in another order). */
  readonly index: number;
  /** How many records it holds. */
  readonly count: number;
  readonly nullFields: NullField[];
  /**
   * The records in file order, `size` at a time (the last batch may be
   * shorter); built as they are asked for, so only one batch need be alive.
   * Iterate it once, before asking for the next export.
   */
  batches(size: number): Iterable<ExportRecord[]>;
}

/**
 * An export declared with realmListFallback whose route was skipped (a
 * backend before 3.14.1, or no token of its type): one row per realm of the
 * collection's `--realms` list, the fallback column holding the realm id and
 * every other column null, listed in nullFields with the route's reason.
 */
function realmListExport(
  index: number,
  exp: ExportDef,
  column: string,
  ctx: Context,
  gap: { reason: string; proposedRoute?: string },
): BuiltExport {
  const names = exp.columns.map((c) => c.name);
  const make = plainRecordMaker(names);
  const records = ctx.realms.ids.map((id) => make(names.map((n) => (n === column ? id : null))));
  sortRecords(records, exp.key, names);
  return {
    index,
    export: exp.name,
    available: true,
    count: records.length,
    nullFields: names.filter((n) => n !== column).map((field) => ({ export: exp.name, field, ...gap })),
    *batches(size: number) {
      for (let i = 0; i < records.length; i += size) yield records.slice(i, i + size);
    },
  };
}

function prepareExport(index: number, exp: ExportDef, ctx: Context): BuiltExport {
  const group = ctx.group(exp.route);
  if (group.bodies.length > 0 && group.missing.length === group.bodies.length) {
    const gap = derivationGap(group)!;
    if (
      exp.realmListFallback !== undefined &&
      group.missing.every((m) => m.skipped) &&
      ctx.realms.source !== group.bodies[0]!.label
    ) {
      return realmListExport(index, exp, exp.realmListFallback, ctx, gap);
    }
    return { index, export: exp.name, available: false, ...gap, count: 0, nullFields: [], batches: () => [] };
  }
  const names = exp.columns.map((c) => c.name);
  const getters = exp.columns.map((c) => compileColumn(exp, c, ctx));
  const make = recordMaker(names);
  const rows = rowsOf(exp, group);
  const values: unknown[] = new Array(names.length);
  const recordOf = (row: Row): ExportRecord => {
    for (let c = 0; c < getters.length; c++) values[c] = getters[c]!(row);
    return make(values);
  };
  const keyGetters = exp.key.map((k) => getters[names.indexOf(k)]!);
  // Some realms answered and some did not: the export is published with what there is, and says what is missing.
  const partial =
    group.missing.length > 0 ? { reason: `incomplete: ${group.missing.map((m) => m.reason).join('; ')}` } : {};
  return {
    index,
    export: exp.name,
    available: true,
    ...partial,
    count: rows.length,
    nullFields: nullFieldsOf(exp, group, rows, ctx),
    *batches(size: number) {
      const ordered = orderByUniqueStringKey(rows, keyGetters);
      if (ordered) {
        for (let i = 0; i < ordered.length; i += size) yield ordered.slice(i, i + size).map(recordOf);
        return;
      }
      const records = rows.map(recordOf);
      sortRecords(records, exp.key, names);
      for (let i = 0; i < records.length; i += size) yield records.slice(i, i + size);
    },
  };
}

/**
 * The exports (the 15, and those --include asks for), each with its position in the catalog, built in the order
 * that keeps memory lowest: routes no export reads first (they are validated
 * all the same), then the exports reading the fewest bytes first, so that a
 * large route is parsed when most other bodies have been read and released.
 * Each route's records are released after the last export that reads them.
 */
function* exportsOf(
  reader: CollectionReader,
  ctx: Context,
  defs: readonly ExportDef[],
  afterRelease: (bytes: number) => void,
): Generator<BuiltExport> {
  // The routes whose records each export reads: its own, and those of its joins and counts.
  const reads = defs.map((exp) => new Set([exp.route, ...derivedRoutes(exp)]));
  const read = new Set(reads.flatMap((r) => [...r]));
  let released = 0;
  for (const def of ROUTES) {
    if (read.has(def.id)) continue;
    reader.group(def.id);
    ctx.release(def.id);
    released += reader.bytes(def.id);
  }
  const weight = reads.map((routes) => [...routes].reduce((sum, id) => sum + reader.bytes(id), 0));
  const order = defs.map((_, i) => i).sort((a, b) => weight[a]! - weight[b]! || a - b);
  const pending = new Set(order);
  for (const i of order) {
    if (released > 0) afterRelease(released);
    released = 0;
    yield prepareExport(i, defs[i]!, ctx);
    pending.delete(i);
    for (const route of reads[i]!) {
      if ([...pending].some((j) => reads[j]!.has(route))) continue;
      ctx.release(route);
      released += reader.bytes(route);
    }
  }
  // After the last export nothing more is parsed: no collection is worth its time here (the last export's records are still referenced by its writer).
}

/** What the build says beside the exports: its value once every export was taken. */
export type BuildSummary = Omit<BuildResult, 'exports'>;

/**
 * The build, one export at a time: each export's records are made when its
 * `batches` is iterated, which must happen before the next export is asked
 * for (the routes it read are released then). The generator's return value
 * is the summary. With KEEP_EVERYTHING (the default) the collection is left
 * as it was. Byte for byte, the exports are those of buildAll.
 */
export function* build(
  collection: RawCollection,
  memory: MemoryPolicy = KEEP_EVERYTHING,
  include: readonly Include[] = [],
  options: BuildOptions = {},
): Generator<BuiltExport, BuildSummary, void> {
  const reader = new CollectionReader(collection, memory.consumeBodies, options);
  const defs = exportsFor(include);
  const nullFields: NullField[][] = new Array(defs.length);
  const ctx = new Context(reader, backendRelease(collection.manifest.routes), collection.manifest.realms);
  const exports = exportsOf(reader, ctx, defs, memory.afterRelease);
  // Each export is let go before the next is asked for: a collection after the routes it read are released frees the records it alone reached.
  let step: IteratorResult<BuiltExport, void> | undefined = exports.next();
  while (!step.done) {
    const { index, nullFields: own } = step.value;
    yield step.value;
    nullFields[index] = own;
    step = undefined;
    step = exports.next();
  }
  return { nullFields: nullFields.flat(), ...reader.report() };
}

/** Every export with all its records at once, in catalog order; the collection is not modified. */
export function buildAll(
  collection: RawCollection,
  include: readonly Include[] = [],
  options: BuildOptions = {},
): BuildResult {
  const exports: ExportResult[] = new Array(exportsFor(include).length);
  const built = build(collection, KEEP_EVERYTHING, include, options);
  let step = built.next();
  for (; !step.done; step = built.next()) {
    const e = step.value;
    let records: ExportRecord[] = [];
    for (const batch of e.batches(Math.max(1, e.count))) records = batch;
    const { export: name, available, reason, proposedRoute } = e;
    exports[e.index] = {
      export: name,
      records,
      available,
      ...(reason !== undefined ? { reason } : {}),
      ...(proposedRoute !== undefined ? { proposedRoute } : {}),
    };
  }
  return { exports, ...step.value };
}

/** What the collection shows of the backend's release. */
type BackendRelease = '3.14.1+' | 'before 3.14.1' | 'unknown';

const ROUTES_3141: ReadonlySet<string> = new Set(
  ROUTES.filter((r) => r.since === '3.14.1').map((r) => `${r.method} ${r.path}`),
);

/**
 * From the answers of the 3.14.1 routes (docs/exports.md): a backend
 * before 3.14.1 answers them 404, a 3.14.1 backend serves them. Unknown when
 * none was answered (not called for lack of a token, or failed). Read from
 * the routes, never from which fields the records happen to carry.
 */
export function backendRelease(routes: readonly RouteRecord[]): BackendRelease {
  let served = false;
  let notServed = false;
  for (const r of routes) {
    if (!ROUTES_3141.has(r.route)) continue;
    if (r.status === 404) notServed = true;
    else if (r.status !== null && r.status >= 200 && r.status < 300 && r.error === undefined) served = true;
  }
  // A backend that serves one 3.14.1 route is 3.14.1, whatever another answered.
  return served ? '3.14.1+' : notServed ? 'before 3.14.1' : 'unknown';
}
