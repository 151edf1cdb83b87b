import { sha256Hex } from '../util/safe-read.js';
import { z } from 'zod';
import * as m from './models.js';

/** Resource types a token can carry (spec section 5). */
export const TOKEN_TYPES = ['User', 'Team', 'Drive', 'VM', 'Project'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/** Backend release that added a route; null for routes every supported release serves. */
type Release = '3.14.1' | null;

export interface RouteDef {
  /** Stable identifier, used by the exports and the fake backend. */
  readonly id: string;
  readonly method: 'GET';
  /** Path template relative to the base URL; `{realm}` stands for a realm id. */
  readonly path: string;
  readonly tokenType: TokenType;
  readonly since: Release;
  /** Called once per realm. */
  readonly perRealm: boolean;
  /** Raw file name template; `{realm}` is replaced by the file-safe realm id. */
  readonly file: string;
  /** `array`: a list of `item`; `object`: a single `item`. */
  readonly shape: 'array' | 'object';
  /** zod model of one element (or of the whole body for `object`). */
  readonly item: z.ZodObject;
  /**
   * A per-realm route whose records name their realm too: the field that
   * does. The route's realm is the one exported (it is what was asked for);
   * a record naming another is counted as a validation issue.
   */
  readonly recordRealm?: string;
}

/**
 * The declared part of a route: every route is a GET, per realm when its path holds `{realm}`, an array unless said,
 * and stored in the file its path names (`/api/vms/images?realm={realm}` in `api-vms-images-{realm}.json`).
 */
type RouteInput = Omit<RouteDef, 'method' | 'since' | 'perRealm' | 'shape' | 'file'> &
  Partial<Pick<RouteDef, 'since' | 'shape'>>;

function route(def: RouteInput): RouteDef {
  const file = `${def.path.slice(1).replace(/\?realm=|\//g, '-')}.json`;
  return { method: 'GET', since: null, perRealm: def.path.includes('{realm}'), shape: 'array', file, ...def };
}

/**
 * Every GET route the client reads (only GET routes, never a write), in the order they are
 * planned. The collector, replay reader, fake backend and docs read this list.
 */
export const ROUTES: readonly RouteDef[] = [
  route({
    id: 'realms',
    path: '/api/realms',
    tokenType: 'VM',
    since: '3.14.1',
    shape: 'object',
    item: m.RealmsResponse,
  }),
  route({ id: 'users', path: '/api/users', tokenType: 'User', item: m.UserInfo }),
  route({ id: 'teams', path: '/api/teams', tokenType: 'Team', item: m.TeamInfo }),
  route({ id: 'drives', path: '/api/drives', tokenType: 'Drive', item: m.DriveInfo }),
  route({
    id: 'projects',
    path: '/api/projects',
    tokenType: 'Project',
    item: m.ProjectInfo,
  }),
  route({
    id: 'vms-images',
    path: '/api/vms/images?realm={realm}',
    tokenType: 'VM',
    item: m.ImageInfo,
  }),
  route({
    id: 'vms-active',
    path: '/api/vms/{realm}/active',
    tokenType: 'VM',
    item: m.VirtualMachine,
    recordRealm: 'realmID',
  }),
  route({
    id: 'vms-configs',
    path: '/api/vms/{realm}/configs',
    tokenType: 'VM',
    item: m.VMConfigInfo,
  }),
  route({
    id: 'vms-bricks',
    path: '/api/vms/bricks',
    tokenType: 'VM',
    since: '3.14.1',
    item: m.BrickInfoListed,
  }),
  route({
    id: 'external-servers',
    path: '/api/external-servers',
    tokenType: 'VM',
    since: '3.14.1',
    item: m.ExternalServerInfo,
  }),
  route({
    id: 'teams-usage',
    path: '/api/teams/usage',
    tokenType: 'Team',
    since: '3.14.1',
    item: m.UsageInfo,
  }),
  route({
    id: 'projects-memberships',
    path: '/api/projects/memberships',
    tokenType: 'Project',
    since: '3.14.1',
    item: m.ProjectMembershipInfo,
  }),
  route({
    id: 'projects-usage',
    path: '/api/projects/usage',
    tokenType: 'Project',
    since: '3.14.1',
    item: m.ProjectUsageInfo,
  }),
  route({
    id: 'security-requirements',
    path: '/api/security-requirements',
    tokenType: 'Project',
    since: '3.14.1',
    item: m.SecurityRequirementInfo,
  }),
  route({
    id: 'security-levels',
    path: '/api/security-levels',
    tokenType: 'Project',
    since: '3.14.1',
    item: m.SecurityLevelInfo,
  }),
  route({
    id: 'users-certifications',
    path: '/api/users/certifications',
    tokenType: 'User',
    since: '3.14.1',
    item: m.UserCertificationInfo,
  }),
  route({
    id: 'users-managed-objects',
    path: '/api/users/managed-objects',
    tokenType: 'User',
    since: '3.14.1',
    item: m.ManagedObjectInfo,
  }),
];

function checkCatalog(routes: readonly RouteDef[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    for (const key of [`id:${r.id}`, `path:${r.path}`, `file:${r.file}`]) {
      if (seen.has(key)) throw new Error(`route catalog: duplicate ${key}`);
      seen.add(key);
    }
    if (r.perRealm !== r.file.includes('{realm}')) {
      throw new Error(`route catalog: ${r.id} perRealm does not match its path and file templates`);
    }
    if (r.recordRealm !== undefined && (!r.perRealm || !Object.hasOwn(r.item.shape, r.recordRealm))) {
      throw new Error(
        `route catalog: ${r.id} recordRealm ${r.recordRealm} is not a field of a per-realm route's model`,
      );
    }
  }
}
checkCatalog(ROUTES);

export function routeById(id: string): RouteDef {
  const r = ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`unknown route id ${id}`);
  return r;
}

export const REALMS_ROUTE = routeById('realms');

const SAFE_REALM = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A realm id as it may appear in a file name: kept when
 * it is a safe name, otherwise percent-encoded (every byte outside the safe set,
 * plus `.` when the id is `.` or `..`), so no name holds a separator or escapes.
 */
export function realmFileComponent(realm: string): string {
  return fitRealmComponent(realm, encodeRealm(realm));
}

/**
 * An id's UTF-8 bytes; a lone surrogate (valid in a JSON string, so a server
 * may send one) as its three WTF-8 bytes, where UTF-8 would put U+FFFD's and
 * encodeURIComponent throws: two ids never share their bytes.
 */
function idBytes(id: string): Buffer {
  if (!/[\ud800-\udfff]/.test(id)) return Buffer.from(id, 'utf8');
  const parts: Buffer[] = [];
  for (const ch of id) {
    const c = ch.charCodeAt(0);
    const lone = ch.length === 1 && c >= 0xd800 && c <= 0xdfff;
    parts.push(lone ? Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]) : Buffer.from(ch));
  }
  return Buffer.concat(parts);
}

function encodeRealm(realm: string): string {
  if (SAFE_REALM.test(realm) && realm !== '.' && realm !== '..') return realm;
  const bytes = idBytes(realm);
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out === '' ? '%' : out;
}

/** Longest realm part of a file name: the longest template adds 21 characters, and most file systems allow 255 bytes. */
export const MAX_REALM_COMPONENT = 120;

/**
 * A component too long for a file name (a 300-character realm id, or one
 * tripled by percent-encoding) is cut and given a hash of the whole id:
 * `<first 100 characters>~<16 hex digits>`. `~` occurs in no other
 * component, so a cut name never equals an uncut one; the manifest maps each
 * route to its file, so nothing parses the name back.
 */
function fitRealmComponent(realm: string, encoded: string): string {
  if (encoded.length <= MAX_REALM_COMPONENT) return encoded;
  // Never end inside a %XX escape.
  const head = encoded.slice(0, 100).replace(/%[0-9A-F]?$/, '');
  return `${head}~${sha256Hex(realm).slice(0, 16)}`;
}

/**
 * A path segment as encodeURIComponent writes it, from idBytes (a lone
 * surrogate's WTF-8 bytes; the request then fails as the server answers it).
 * encodeURIComponent leaves dots alone, so `.` and `..` would be dot segments
 * that URL parsers resolve away; encode them too.
 */
function encodePathSegment(value: string): string {
  let encoded = '';
  for (const b of idBytes(value)) {
    const c = String.fromCharCode(b);
    encoded += /[A-Za-z0-9\-_.!~*'()]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return /^\.+$/.test(encoded) ? encoded.replace(/\./g, '%2E') : encoded;
}

/** One concrete request of a plan. */
export interface PlannedRoute {
  readonly def: RouteDef;
  readonly realm?: string;
  /** `GET /api/...` with its query; what the manifest shows. */
  readonly label: string;
  /** Path and query to request, relative to the base URL, realm URL-encoded. */
  readonly urlPath: string;
  /** Raw file name. */
  readonly file: string;
}

export function planRoute(def: RouteDef, realm?: string): PlannedRoute {
  if (def.perRealm && realm === undefined) throw new Error(`route ${def.id} needs a realm`);
  const fill = (tpl: string, value: string) => tpl.replace('{realm}', value);
  const urlPath = def.perRealm ? fill(def.path, encodePathSegment(realm!)) : def.path;
  return {
    def,
    realm,
    label: `${def.method} ${urlPath}`,
    urlPath,
    file: def.perRealm ? fill(def.file, realmFileComponent(realm!)) : def.file,
  };
}

/** Every route to read once the realms are known, realms route excluded. */
export function planRoutes(realms: readonly string[]): PlannedRoute[] {
  return ROUTES.filter((def) => def !== REALMS_ROUTE).flatMap((def) =>
    def.perRealm ? realms.map((realm) => planRoute(def, realm)) : [planRoute(def)],
  );
}
