/**
 * The vocabulary of the export catalog. An export is data: a name, its source
 * route, a key, and columns in file order; every column has exactly one
 * source (a field of the route's record, a derivation over other routes, or
 * `unavailable` with a reason). The build, the nulls manifest and
 * docs/exports.md are all computed from these declarations.
 */
import type { Include } from '../includes.js';

/**
 * How a field's value is written:
 * - `value`: as is (scalars, arrays of scalars);
 * - `entries`: an open-ended map as its sorted `"key=value"` strings;
 * - `count`: the length of an array;
 * - `json`: a free-form object as one compact JSON text, keys sorted at every
 *   level (so that an unchanged object is an unchanged text).
 */
export type Representation = 'value' | 'entries' | 'count' | 'json';

/** A scalar a default can take. */
type DefaultScalar = string | number | boolean;

/**
 * A default the API documents for an absent field, written instead of null.
 * A value of the wrong type is still null (and counted under validation):
 * only an absent field takes the default.
 */
export interface ColumnDefault {
  /** The value written; with `by`, the value for any `by` value not in `cases`. */
  readonly value: DefaultScalar;
  /** A scalar field of the same record (dotted path) whose value chooses the default, e.g. the brick's OS. */
  readonly by?: string;
  readonly cases?: Readonly<Record<string, DefaultScalar>>;
  /**
   * `parent` (the default): only where the object holding the field is
   * present (a libvirt default means nothing for a brick without a libvirt
   * configuration). `row`: wherever the value is absent, its holding object
   * included, and for a join also where the row has no record to join (a
   * usage group absent from its row, or a team without a usage row).
   */
  readonly scope?: 'parent' | 'row';
  /** What the spec says, quoted in docs/exports.md. */
  readonly spec: string;
}

/** A field of the export's own record, as a dotted path. */
interface FieldSource {
  readonly kind: 'field';
  readonly path: string;
  readonly as: Representation;
}

/** A field of the one record of another route whose `by` equals this row's `on` (a Map lookup). */
interface JoinSource {
  readonly kind: 'join';
  /** Route id (src/api/catalog.ts); a per-realm route is read in every realm. */
  readonly route: string;
  readonly on: string;
  readonly by: string;
  readonly path: string;
  readonly as: Representation;
}

/** The number of records of another route (every realm) whose `by` equals this row's `on`. */
interface CountSource {
  readonly kind: 'count';
  readonly route: string;
  readonly on: string;
  readonly by: string;
}

/** The realm a per-realm record was read from. */
interface RealmSource {
  readonly kind: 'realm';
}

/** A column the API does not supply; written as null in every record and listed in nullFields. */
interface UnavailableSource {
  readonly kind: 'unavailable';
  readonly reason: string;
  readonly proposedRoute?: string;
}

/** Whether the field at `path` (of the row) equals the field at `other` (of the record): a realm that is the default realm. */
interface EqualsSource {
  readonly kind: 'equals';
  readonly path: string;
  /** A scalar field of the record itself (not of the `each` element). */
  readonly other: string;
}

type ColumnSource = FieldSource | JoinSource | CountSource | RealmSource | UnavailableSource | EqualsSource;

export interface ColumnDef {
  readonly name: string;
  readonly source: ColumnSource;
  /** For `field` and `join` columns written as values: the API's documented default. */
  readonly default?: ColumnDefault;
  /** Optional remark for docs/exports.md. */
  readonly note?: string;
  /**
   * A map written `as: 'entries'` whose keys are ids (a config's drive
   * slots, keyed by drive id): the spreadsheets write it as one text column,
   * not one column per key, which would be one column per drive of the site.
   */
  readonly sheetAsList?: true;
}

export interface ExportDef {
  readonly name: string;
  /** One sentence for docs/exports.md. */
  readonly description: string;
  /** Route id of the records behind the rows. */
  readonly route: string;
  /**
   * An array field of the route's record: one row per element (paths under
   * it read the element); or a map of objects (one row per value, in key
   * order; for the realms of GET /api/realms).
   */
  readonly each?: string;
  /** Written only with `--include <include>`, after the 15 exports (docs/exports.md). */
  readonly include?: Include;
  /**
   * When the route is skipped (not served before 3.14.1, or no token), one
   * row per realm of the collection's realm list (`--realms`): this column
   * holds the realm id, every other column is null and listed in nullFields
   * with the route's reason.
   */
  readonly realmListFallback?: string;
  /** Column names, most significant first: the sort order and the identity of a row for diff. */
  readonly key: readonly string[];
  readonly columns: readonly ColumnDef[];
  /**
   * Model fields deliberately not exported, with the reason (checked against
   * the model at load). `path.*` names the keys of an open object (one that
   * keeps unknown keys) other than those exported as columns.
   */
  readonly omit: Readonly<Record<string, string>>;
}

/** The other routes an export's joins and counts read, each once, in column order. */
export function derivedRoutes(exp: ExportDef): Set<string> {
  const out = new Set<string>();
  for (const c of exp.columns) if (c.source.kind === 'join' || c.source.kind === 'count') out.add(c.source.route);
  return out;
}

type ExportInput = Omit<ExportDef, 'omit'> & Partial<Pick<ExportDef, 'omit'>>;

/** Declares an export. The catalog checks every declaration against the route catalog and models at load. */
export function defineExport(input: ExportInput): ExportDef {
  return Object.freeze({
    ...input,
    key: Object.freeze([...input.key]),
    columns: Object.freeze(input.columns.map((c) => Object.freeze(c))),
    omit: Object.freeze({ ...input.omit }),
  });
}

/** `teamQuotas.cores` → `teamQuotas_cores`. */
export function flatName(path: string): string {
  return path.split('.').join('_');
}

interface ColumnOptions {
  /** Column name; default: the path with `.` replaced by `_`. */
  name?: string;
  as?: Representation;
  note?: string;
  default?: ColumnDefault;
  sheetAsList?: true;
}

/** A column of `source`, with whichever of `default`, `note` and `sheetAsList` are given. */
function column(name: string, source: ColumnSource, opts: Omit<ColumnOptions, 'name' | 'as'>): ColumnDef {
  return {
    name,
    source,
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.note !== undefined ? { note: opts.note } : {}),
    ...(opts.sheetAsList ? { sheetAsList: true as const } : {}),
  };
}

/** A column read from the record's field at `path`. */
export function field(path: string, opts: ColumnOptions = {}): ColumnDef {
  return column(opts.name ?? flatName(path), { kind: 'field', path, as: opts.as ?? 'value' }, opts);
}

/** A column read from the record of `route` whose `by` equals this row's `on`. */
export function join(
  name: string,
  spec: Omit<JoinSource, 'kind' | 'as'> & Partial<Pick<JoinSource, 'as'>> & Pick<ColumnOptions, 'note' | 'default'>,
): ColumnDef {
  const { route, on, by, path } = spec;
  return column(name, { kind: 'join', route, on, by, path, as: spec.as ?? 'value' }, spec);
}

/** A column counting the records of `route` whose `by` equals this row's `on`. */
export function count(name: string, spec: Omit<CountSource, 'kind'> & Pick<ColumnOptions, 'note'>): ColumnDef {
  return column(name, { kind: 'count', route: spec.route, on: spec.on, by: spec.by }, spec);
}

/** A column holding the realm a per-realm record was read from. */
export function realm(name: string, note?: string): ColumnDef {
  return column(name, { kind: 'realm' }, { note });
}

/** A column the API cannot supply. `proposedRoute`, when given, must be a GET route the API documents. */
export function unavailable(name: string, reason: string, proposedRoute?: string): ColumnDef {
  return { name, source: { kind: 'unavailable', reason, ...(proposedRoute !== undefined ? { proposedRoute } : {}) } };
}

/** A boolean column: whether the row's field `path` equals the record's scalar field `other` (null when either is absent). */
export function equals(name: string, spec: Omit<EqualsSource, 'kind'> & Pick<ColumnOptions, 'note'>): ColumnDef {
  return column(name, { kind: 'equals', path: spec.path, other: spec.other }, spec);
}
