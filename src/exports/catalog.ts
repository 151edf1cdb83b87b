/**
 * The 15 exports in file-manifest order (docs/exports.md), then those
 * `--include` adds, checked against
 * the route catalog and the zod models when this module loads: a typo in a
 * path, a duplicate name, or a model field that is neither exported nor
 * deliberately omitted fails at import, not in a nightly run.
 */
import { z } from 'zod';
import { ROUTES, routeById, type RouteDef } from '../api/catalog.js';
import type { ColumnDef, ExportDef, Representation } from './define.js';
import { elementOf, fieldsOf, isOpenObject, kindOf, recordValueOf, resolvePath, unwrap } from './schema.js';
import { TIMESTAMPS } from '../api/models.js';
import users from './defs/users.js';
import teams from './defs/teams.js';
import teamMemberships from './defs/team_memberships.js';
import drives from './defs/drives.js';
import projects from './defs/projects.js';
import projectMemberships from './defs/project_memberships.js';
import resourcesByProject from './defs/resources_by_project.js';
import securityRequirements from './defs/security_requirements.js';
import securityLevels from './defs/security_levels.js';
import userProfiles from './defs/user_profiles.js';
import userCertifications from './defs/user_certifications.js';
import subAdminManagedObjects from './defs/sub-admin_managed_objects.js';
import vmImages from './defs/vm_images.js';
import vmHardwareSetups from './defs/vm_hardware_setups.js';
import licensingServers from './defs/licensing_servers.js';
import vmConfigs from './defs/vm_configs.js';
import activeVms from './defs/active_vms.js';
import realms from './defs/realms.js';
import type { Include } from '../includes.js';

/** Every export declared: the 15, then the groups `--include` adds, in file-manifest order. */
export const CATALOG: readonly ExportDef[] = Object.freeze([
  users,
  teams,
  teamMemberships,
  drives,
  projects,
  projectMemberships,
  resourcesByProject,
  securityRequirements,
  securityLevels,
  userProfiles,
  userCertifications,
  subAdminManagedObjects,
  vmImages,
  vmHardwareSetups,
  licensingServers,
  // --include vms
  vmConfigs,
  activeVms,
  realms,
]);

/** The 15 exports every snapshot writes (docs/exports.md). */
export const EXPORTS: readonly ExportDef[] = Object.freeze(CATALOG.filter((e) => e.include === undefined));

/** The exports a build writes: the 15, then those of each group asked for with --include, in catalog order. */
export function exportsFor(include: readonly Include[]): ExportDef[] {
  return CATALOG.filter((e) => e.include === undefined || include.includes(e.include));
}

type Schema = RouteDef['item'];

/** How a column's values are kept: a number (integer or real), a boolean, or text (strings; lists, maps and objects as JSON). */
export type ValueKind = 'integer' | 'real' | 'boolean' | 'text';

/** A column's type, declared once by its source and the model it reads: the spreadsheets, the history and the docs read it here. */
export interface ColumnType {
  /** The schema of the model field the column reads (the map itself for a map), or of the value its source makes. */
  readonly schema: z.ZodType;
  /** How the values the build writes are kept (a map's `"key=value"` strings, an object's JSON: text). */
  readonly kind: ValueKind;
  /** Epoch milliseconds: a `ts()` field of the models (src/api/models.ts). */
  readonly timestamp: boolean;
  /** A map written as sorted `"key=value"` strings. */
  readonly entries: boolean;
}

/**
 * The type of a column: a field or join written as a value has its model
 * field's; the other sources the type they make (a count is an integer, a
 * map its `"key=value"` strings, an object its JSON text, `equals` a
 * boolean, an unavailable column null), so that no source is left untyped.
 */
export function columnType(exp: ExportDef, col: ColumnDef): ColumnType {
  const src = col.source;
  const read = src.kind === 'field' || src.kind === 'join' ? readSchema(exp, src) : undefined;
  const as = src.kind === 'field' || src.kind === 'join' ? src.as : undefined;
  let written: z.ZodType;
  if (src.kind === 'count' || as === 'count') written = z.number().int();
  else if (as === 'entries') written = z.array(z.string());
  else if (as === 'json' || src.kind === 'realm') written = z.string();
  else if (src.kind === 'equals') written = z.boolean();
  else written = read ?? z.null();
  const u = unwrap(written);
  const kind: ValueKind =
    u instanceof z.ZodNumber ? (u.isInt ? 'integer' : 'real') : u instanceof z.ZodBoolean ? 'boolean' : 'text';
  return { schema: as === 'entries' ? read! : written, kind, timestamp: TIMESTAMPS.has(u), entries: as === 'entries' };
}

/** The model schema a field or join column reads. */
function readSchema(exp: ExportDef, src: Extract<ColumnDef['source'], { kind: 'field' | 'join' }>): z.ZodType {
  return src.kind === 'field'
    ? resolvePath(routeById(exp.route).item, src.path, exp.each).schema
    : resolvePath(routeById(src.route).item, src.path).schema;
}

/**
 * The GET routes the API documents (spec section 4): those the client reads,
 * and the two it has no use for. A `proposedRoute` must be one of these: a
 * route that does not exist is no proposal.
 */
export const DOCUMENTED_GET_ROUTES: ReadonlySet<string> = new Set([
  ...ROUTES.map((r) => `${r.method} ${r.path}`),
  'GET /api/teams/quotas',
  'GET /api/projects/{projectID}',
]);

/** The schema at `path` (resolvePath), its error told as of `where`. */
function schemaAt(where: string, root: Schema, path: string, each?: string): z.ZodType {
  try {
    return resolvePath(root, path, each).schema;
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

/** Checks that the value at `path` can be written with `as` (flat: no nested objects); returns its kind. */
function checkRepresentation(where: string, root: Schema, path: string, as: Representation, each?: string): string {
  const schema = schemaAt(where, root, path, each);
  const kind = kindOf(schema);
  const ok =
    as === 'value'
      ? kind === 'scalar' || (kind === 'array' && kindOf(elementOf(schema)!) === 'scalar')
      : as === 'entries'
        ? kind === 'record' && kindOf(recordValueOf(schema)!) === 'scalar'
        : as === 'json'
          ? kind === 'record' || kind === 'object'
          : kind === 'array';
  if (!ok) throw new Error(`${where}: "${path}" is ${kind}, which cannot be written as ${as}`);
  return kind;
}

function scalarPath(where: string, root: Schema, path: string, each?: string): void {
  if (checkRepresentation(where, root, path, 'value', each) !== 'scalar')
    throw new Error(`${where}: "${path}" is not a scalar`);
}

/** A default is a scalar of the column's own type, on a column written as a value. */
function checkDefault(where: string, exp: ExportDef, route: RouteDef, col: ColumnDef): void {
  const d = col.default;
  if (!d) return;
  const src = col.source;
  if ((src.kind !== 'field' && src.kind !== 'join') || src.as !== 'value')
    throw new Error(`${where}: a default needs a field or join column written as a value`);
  if (!d.spec) throw new Error(`${where}: a default must quote the spec`);
  const schema = readSchema(exp, src);
  for (const v of [d.value, ...Object.values(d.cases ?? {})]) {
    if (!schema.safeParse(v).success)
      throw new Error(`${where}: default ${JSON.stringify(v)} is not a value of the field's type`);
  }
  if (d.by !== undefined || d.cases !== undefined) {
    if (src.kind !== 'field' || d.by === undefined || d.cases === undefined)
      throw new Error(`${where}: a default chosen by another field needs a field column, \`by\` and \`cases\``);
    scalarPath(where, route.item, d.by, exp.each);
  }
}

function checkColumn(exp: ExportDef, route: RouteDef, col: ColumnDef): void {
  const where = `export ${exp.name}, column ${col.name}`;
  const src = col.source;
  checkDefault(where, exp, route, col);
  switch (src.kind) {
    case 'field':
      checkRepresentation(where, route.item, src.path, src.as, exp.each);
      return;
    case 'join':
    case 'count':
      scalarPath(where, route.item, src.on, exp.each);
      scalarPath(where, routeById(src.route).item, src.by);
      if (src.kind === 'join') checkRepresentation(where, routeById(src.route).item, src.path, src.as);
      return;
    case 'equals':
      scalarPath(where, route.item, src.path, exp.each);
      scalarPath(where, route.item, src.other);
      return;
    case 'realm':
      if (!route.perRealm)
        throw new Error(`${where}: a realm column needs a per-realm route, and ${route.id} is not one`);
      return;
    case 'unavailable':
      if (!src.reason) throw new Error(`${where}: an unavailable column needs a reason`);
      if (src.proposedRoute !== undefined && !DOCUMENTED_GET_ROUTES.has(src.proposedRoute)) {
        throw new Error(`${where}: proposed route "${src.proposedRoute}" is not a GET route the API documents`);
      }
      return;
  }
}

/**
 * Every field of the route's model, at every object level a column reaches
 * into, is exported or named in `omit` with a reason. This is what keeps
 * "every field a user would want" true when the models grow.
 */
function checkCoverage(exp: ExportDef, route: RouteDef): void {
  const used = exp.columns.flatMap((c) =>
    c.source.kind === 'field' ? [c.source.path] : c.source.kind === 'equals' ? [c.source.path, c.source.other] : [],
  );
  const omitted = Object.keys(exp.omit);
  const resolveOmitted = (o: string, path: string) =>
    schemaAt(`export ${exp.name}: omitted "${o}"`, route.item, path, exp.each);
  for (const o of omitted) {
    if (o.endsWith('.*')) {
      // The other keys of an open object: it must be open, and some of its keys exported.
      const base = o.slice(0, -2);
      if (!isOpenObject(resolveOmitted(o, base)))
        throw new Error(`export ${exp.name}: omitted "${o}": "${base}" is not an open object`);
      if (!used.some((u) => u.startsWith(`${base}.`)))
        throw new Error(`export ${exp.name}: omitted "${o}": no key of "${base}" is exported; omit "${base}" itself`);
      continue;
    }
    resolveOmitted(o, o);
    if (used.some((u) => u === o || u.startsWith(`${o}.`) || o.startsWith(`${u}.`))) {
      throw new Error(`export ${exp.name}: "${o}" is both exported and omitted`);
    }
  }
  const visit = (schema: Schema, prefix: string): void => {
    for (const [k, child] of fieldsOf(schema) ?? []) {
      const p = prefix + k;
      if (used.includes(p) || omitted.includes(p)) continue;
      if (used.some((u) => u.startsWith(`${p}.`))) {
        const inner = (p === exp.each ? (elementOf(child) ?? recordValueOf(child)) : child) as Schema;
        if (isOpenObject(inner) && !omitted.includes(`${p}.*`))
          throw new Error(
            `export ${exp.name}: the other keys of open object "${p}" are neither exported nor omitted ("${p}.*") with a reason`,
          );
        visit(inner, `${p}.`);
        continue;
      }
      throw new Error(`export ${exp.name}: field "${p}" of ${route.id} is neither a column nor omitted with a reason`);
    }
  };
  visit(route.item, '');
}

export function checkExportCatalog(exports: readonly ExportDef[]): void {
  const names = new Set<string>();
  for (const exp of exports) {
    if (names.has(exp.name)) throw new Error(`export catalog: duplicate export ${exp.name}`);
    names.add(exp.name);
    const route = routeById(exp.route);
    if (route.shape !== 'array' && exp.each === undefined)
      throw new Error(`export ${exp.name}: route ${route.id} does not return a list`);
    if (exp.each !== undefined) {
      const s = resolvePath(route.item, exp.each).schema;
      const inner = elementOf(s) ?? recordValueOf(s);
      if (!inner || kindOf(inner) !== 'object')
        throw new Error(`export ${exp.name}: each "${exp.each}" is not an array or a map of objects`);
    }
    if (exp.realmListFallback !== undefined) {
      const c = exp.columns.find((x) => x.name === exp.realmListFallback);
      if (!c || c.source.kind !== 'field' || c.source.as !== 'value')
        throw new Error(`export ${exp.name}: realmListFallback "${exp.realmListFallback}" is not a field column`);
    }
    if (exp.include !== undefined && exports.some((e, i) => e.include === undefined && i > exports.indexOf(exp))) {
      throw new Error(`export ${exp.name}: an export of an --include group must come after the 15`);
    }
    const cols = new Map<string, ColumnDef>();
    for (const col of exp.columns) {
      // Integer-like keys would be reordered by JavaScript objects and break the declared column order.
      if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(col.name))
        throw new Error(`export ${exp.name}: bad column name "${col.name}"`);
      if (cols.has(col.name)) throw new Error(`export ${exp.name}: duplicate column ${col.name}`);
      cols.set(col.name, col);
      checkColumn(exp, route, col);
    }
    if (exp.key.length === 0) throw new Error(`export ${exp.name}: empty key`);
    for (const k of exp.key) {
      const col = cols.get(k);
      if (!col) throw new Error(`export ${exp.name}: key column ${k} is not a column`);
      const src = col.source;
      const scalar =
        src.kind === 'realm' ||
        src.kind === 'count' ||
        (src.kind === 'field' && src.as === 'count') ||
        ((src.kind === 'field' || src.kind === 'join') &&
          src.as === 'value' &&
          kindOf(readSchema(exp, src)) === 'scalar');
      if (!scalar) throw new Error(`export ${exp.name}: key column ${k} is not a scalar column`);
    }
    checkCoverage(exp, route);
  }
}

checkExportCatalog(CATALOG);
