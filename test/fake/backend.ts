import { setTimeout as nodeSleep } from 'node:timers/promises';
import { http, HttpResponse, type RequestHandler } from 'msw';
import { ROUTES, TOKEN_TYPES, type RouteDef, type TokenType } from '../../src/api/catalog.js';
import { generateDataset, type DatasetOptions } from './dataset.js';
import type { Dataset, FakeRelease } from './types.js';

/**
 * The fake management API: msw handlers generated from the route catalog
 * (one per catalog route, so a route added to the catalog without data here
 * fails at once), serving a generated dataset. Used in-process through msw and
 * over a real loopback HTTPS server (server.ts).
 */

export interface FakeToken {
  value: string;
  types: readonly TokenType[];
  readOnly?: boolean;
}

/** An obviously fake token reaching every type. */
export const ALL_TYPES_TOKEN: FakeToken = Object.freeze({ value: 'fake-token-all-types', types: TOKEN_TYPES });

/** One obviously fake read-only token per type, as backends before 3.14.1 hand them out. */
export const PER_TYPE_TOKENS: readonly FakeToken[] = Object.freeze(
  TOKEN_TYPES.map((type): FakeToken => ({
    value: `fake-token-${type.toLowerCase()}-only`,
    types: [type],
    readOnly: true,
  })),
);

/** The environment that gives the CLI those tokens: SVC_TOKEN_USER=…, SVC_TOKEN_VM=… */
export function perTypeTokenEnv(tokens: readonly FakeToken[] = PER_TYPE_TOKENS): Record<string, string> {
  return Object.fromEntries(tokens.map((t) => [`SVC_TOKEN_${t.types[0]!.toUpperCase()}`, t.value]));
}

type AuthMechanism = 'cookie' | 'url-param' | 'none';

interface RequestRecord {
  method: string;
  /** Path and query as received (still percent-encoded); a `token` parameter's value is replaced by `REDACTED`. */
  path: string;
  status: number;
  /** How a token was presented; never the token itself. */
  auth: AuthMechanism;
  /** Catalog route id or write route id; null when nothing matched (404). */
  route: string | null;
  /** Decoded realm id of a per-realm route. */
  realm?: string;
  /** One of the five write routes. Tests assert there are none. */
  write: boolean;
}

/**
 * A fault of one route. Matching requests are answered, in order:
 * - while `statuses` last (forever with `always`): that status, JSON error body,
 *   with `Retry-After: retryAfter` when given;
 * - then, only when the fault has a body effect (`html200`, `malformed`,
 *   `truncate`, `body`): that effect, on every request or the first `times`;
 *   a fault with only `statuses` is spent, and the route answers normally.
 * `delayMs` delays every request the fault answers (a fault with only
 * `delayMs` delays every request, or the first `times`).
 */
interface Fault {
  statuses?: number[];
  retryAfter?: string;
  delayMs?: number;
  /** 200 with an HTML login page, content-type text/html. */
  html200?: true;
  /** 200, content-type JSON, body that is not JSON. */
  malformed?: true;
  /** Over the real server: full Content-Length, half the body, then the socket is destroyed. */
  truncate?: true;
  /** Replaces the route's body (serialised as JSON). */
  body?: unknown;
  /** Repeat `statuses` forever. */
  always?: true;
  /** Limit the body effect (or a lone delay) to the first `times` requests after the statuses. */
  times?: number;
}

/** A catalog route id, optionally limited to one realm. `'vms-active'` or `{ route: 'vms-active', realm: 'libvirt' }`. */
type FaultMatch = string | { route: string; realm?: string };

export interface FakeBackendOptions extends DatasetOptions {
  /** Origin the handlers answer, e.g. `https://127.0.0.1:PORT` (a path prefix is allowed). */
  baseUrl: string;
  /** Serve this dataset instead of generating one (its release is used). */
  dataset?: Dataset;
  /** Default: [ALL_TYPES_TOKEN]. */
  tokens?: readonly FakeToken[];
  /** Added before every answer. */
  latencyMs?: number;
}

export interface FakeBackend {
  handlers: RequestHandler[];
  dataset: Dataset;
  release: FakeRelease;
  /** Every request answered, in order. */
  requests: RequestRecord[];
  setFault(match: FaultMatch, fault: Fault): void;
  /** Clears one route's (or route and realm's) fault, or all of them. */
  clearFaults(match?: FaultMatch): void;
  /** The exact body a route serves (what a raw collection should hold byte for byte). */
  responseBody(routeId: string, realm?: string): string;
  /** Serialise every served body now rather than on first request. */
  warm(): void;
}

/** The five write routes (spec section 5 point 5). The client must never call them. */
export const WRITE_ROUTES = [
  { id: 'create-image', method: 'POST', path: '/api/vms/images', tokenType: 'VM' },
  { id: 'edit-brick', method: 'PATCH', path: '/api/vms/bricks', tokenType: 'VM' },
  { id: 'create-team', method: 'POST', path: '/api/teams', tokenType: 'Team' },
  { id: 'edit-team-quotas', method: 'PATCH', path: '/api/teams/quotas', tokenType: 'Team' },
  { id: 'disable-users', method: 'POST', path: '/api/users/disable', tokenType: 'User' },
] as const satisfies ReadonlyArray<{ id: string; method: 'POST' | 'PATCH'; path: string; tokenType: TokenType }>;

/** Internal header: server.ts strips it and cuts the body in half. */
export const TRUNCATE_HEADER = 'x-fake-truncate';

/** What each catalog route serves. Keys must be exactly the catalog ids. */
const BODIES: Record<string, (d: Dataset, realm: string) => unknown> = {
  realms: (d) => d.realms,
  users: (d) => d.users,
  teams: (d) => d.teams,
  drives: (d) => d.drives,
  projects: (d) => d.projects,
  'vms-images': (d, realm) => d.perRealm.get(realm)?.images,
  'vms-active': (d, realm) => d.perRealm.get(realm)?.activeVms,
  'vms-configs': (d, realm) => d.perRealm.get(realm)?.configs,
  'vms-bricks': (d) => d.bricks,
  'external-servers': (d) => d.externalServers,
  'teams-usage': (d) => d.teamUsage,
  'projects-memberships': (d) => d.projectMemberships,
  'projects-usage': (d) => d.projectUsage,
  'security-requirements': (d) => d.securityRequirements,
  'security-levels': (d) => d.securityLevels,
  'users-certifications': (d) => d.userCertifications,
  'users-managed-objects': (d) => d.managedObjects,
};

/** Elements serialised per piece of a large list: the benchmark's huge drives body is longer than V8's longest string. */
const SERIALIZE_PIECE = 10_000;

/** JSON.stringify(value) as UTF-8, byte for byte, a large list a piece at a time (never one string). */
function serialize(value: unknown): Buffer {
  if (!Array.isArray(value) || value.length <= SERIALIZE_PIECE) return Buffer.from(JSON.stringify(value), 'utf8');
  const pieces: Buffer[] = [Buffer.from('[')];
  for (let i = 0; i < value.length; i += SERIALIZE_PIECE) {
    const text = JSON.stringify(value.slice(i, i + SERIALIZE_PIECE));
    pieces.push(Buffer.from(`${i > 0 ? ',' : ''}${text.slice(1, -1)}`, 'utf8'));
  }
  pieces.push(Buffer.from(']'));
  return Buffer.concat(pieces);
}

/** Unref'd: a delayed answer pending when the server closes must not keep the process alive. */
const sleep = (ms: number) => nodeSleep(ms, undefined, { ref: false });

const LOGIN_PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><form method="post" action="/login"><h1>Sign in</h1>
<input name="email" type="email"><input name="password" type="password"><button>Sign in</button></form></body></html>
`;
const MALFORMED_JSON = '[{"id": "0b1e", "name": "unterminated\n<html>';

/** A catalog path template split into an msw path and where the realm comes from. */
function compileRoute(def: RouteDef): { path: string; realmFrom: 'path' | { query: string } | null } {
  const [pathPart = '', query] = def.path.split('?', 2);
  let realmFrom: 'path' | { query: string } | null = null;
  if (pathPart.includes('{realm}')) realmFrom = 'path';
  for (const pair of query ? query.split('&') : []) {
    const [name = '', value] = pair.split('=', 2);
    if (value === '{realm}') realmFrom = { query: name };
    else throw new Error(`fake backend: unsupported query in catalog path ${def.path}`);
  }
  if (def.perRealm !== (realmFrom !== null)) throw new Error(`fake backend: cannot find the realm of ${def.path}`);
  return { path: pathPart.replace('{realm}', ':realm'), realmFrom };
}

/** `release >= since`, comparing dotted numbers. */
function servedBy(release: FakeRelease, since: string | null): boolean {
  if (since === null) return true;
  const a = release.split('.').map(Number);
  const b = since.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}

function redactedPath(url: URL): string {
  return url.pathname + url.search.replace(/([?&]token=)[^&]*/g, '$1REDACTED');
}

function jsonError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return HttpResponse.json({ error: message }, { status, headers });
}

function faultKey(match: FaultMatch): { key: string; route: string } {
  const { route, realm } = typeof match === 'string' ? { route: match, realm: undefined } : match;
  return { key: realm === undefined ? route : `${route}\u0000${realm}`, route };
}

interface FaultState {
  fault: Fault;
  hits: number;
}

type Plan =
  | { kind: 'normal'; delayMs: number }
  | { kind: 'status'; status: number; delayMs: number; retryAfter?: string }
  | { kind: 'effect'; delayMs: number; fault: Fault };

function planFault(state: FaultState | undefined): Plan {
  if (!state) return { kind: 'normal', delayMs: 0 };
  const { fault } = state;
  const hit = state.hits++;
  const delayMs = fault.delayMs ?? 0;
  const statuses = fault.statuses ?? [];
  if (statuses.length && (hit < statuses.length || fault.always)) {
    return { kind: 'status', status: statuses[hit % statuses.length] as number, delayMs, retryAfter: fault.retryAfter };
  }
  const hasEffect = fault.html200 || fault.malformed || fault.truncate || fault.body !== undefined;
  if (!hasEffect && statuses.length) return { kind: 'normal', delayMs: 0 };
  if (fault.times !== undefined && hit - statuses.length >= fault.times) return { kind: 'normal', delayMs: 0 };
  return { kind: 'effect', delayMs, fault };
}

export function createFakeBackend(opts: FakeBackendOptions): FakeBackend {
  const base = new URL(opts.baseUrl).href.replace(/\/+$/, '');
  if (opts.dataset && opts.release && opts.dataset.release !== opts.release) {
    throw new Error(`fake backend: dataset is ${opts.dataset.release}, release option is ${opts.release}`);
  }
  const dataset = opts.dataset ?? generateDataset(opts);
  const release = dataset.release;
  const latencyMs = opts.latencyMs ?? 0;
  const tokens = new Map<string, FakeToken>();
  for (const t of opts.tokens ?? [ALL_TYPES_TOKEN]) {
    if (tokens.has(t.value)) throw new Error('fake backend: duplicate token');
    tokens.set(t.value, t);
  }

  const catalogIds = new Set(ROUTES.map((r) => r.id));
  for (const id of catalogIds) if (!BODIES[id]) throw new Error(`fake backend: no data for catalog route ${id}`);
  for (const id of Object.keys(BODIES))
    if (!catalogIds.has(id)) throw new Error(`fake backend: data for unknown route ${id}`);

  const requests: RequestRecord[] = [];
  const faults = new Map<string, FaultState>();
  const cache = new Map<string, Uint8Array>();

  const bodyBytes = (def: RouteDef, realm: string | undefined): Uint8Array => {
    const key = `${def.id}\u0000${realm ?? ''}`;
    let bytes = cache.get(key);
    if (!bytes) {
      const value = (BODIES[def.id] as (d: Dataset, realm: string) => unknown)(dataset, realm ?? '');
      if (value === undefined) throw new Error(`fake backend: no ${def.id} data for realm ${String(realm)}`);
      bytes = serialize(value);
      cache.set(key, bytes);
    }
    return bytes;
  };

  const jsonBytes = (bytes: Uint8Array, extra: Record<string, string> = {}): Response =>
    new HttpResponse(bytes as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': String(bytes.byteLength), ...extra },
    });

  const authenticate = (request: Request, url: URL): { auth: AuthMechanism; token?: FakeToken } => {
    // Spec section 5.1: the URL parameter wins over the cookie.
    const fromUrl = url.searchParams.get('token');
    if (fromUrl !== null) return { auth: 'url-param', token: tokens.get(fromUrl) };
    const fromCookie = readCookie(request.headers.get('cookie'), 'SVC_TOKEN');
    if (fromCookie !== undefined) return { auth: 'cookie', token: tokens.get(fromCookie) };
    return { auth: 'none' };
  };

  const record = (
    request: Request,
    url: URL,
    entry: Omit<RequestRecord, 'method' | 'path'>,
    response: Response,
  ): Response => {
    requests.push({ method: request.method, path: redactedPath(url), ...entry });
    return response;
  };

  const readHandler = (def: RouteDef): RequestHandler => {
    const { path, realmFrom } = compileRoute(def);
    return http.get(`${base}${path}`, async ({ request, params }) => {
      const url = new URL(request.url);
      const realm =
        realmFrom === 'path'
          ? String(params.realm)
          : realmFrom
            ? (url.searchParams.get(realmFrom.query) ?? undefined)
            : undefined;
      const { auth, token } = authenticate(request, url);
      const done = (response: Response) =>
        record(
          request,
          url,
          { status: response.status, auth, route: def.id, write: false, ...(realm !== undefined ? { realm } : {}) },
          response,
        );
      if (latencyMs) await sleep(latencyMs);

      if (!servedBy(release, def.since)) return done(jsonError(404, 'not found'));
      if (!token) return done(jsonError(401, 'missing or invalid token'));
      if (!token.types.includes(def.tokenType)) return done(jsonError(403, `token lacks type ${def.tokenType}`));
      if (def.perRealm && (realm === undefined || realm === '')) return done(jsonError(400, 'realm missing'));
      if (realm !== undefined && !dataset.perRealm.has(realm)) return done(jsonError(404, 'realm not found'));

      const state = (realm !== undefined ? faults.get(`${def.id}\u0000${realm}`) : undefined) ?? faults.get(def.id);
      const plan = planFault(state);
      if (plan.delayMs) await sleep(plan.delayMs);
      if (plan.kind === 'status') {
        return done(
          jsonError(
            plan.status,
            `injected status ${plan.status}`,
            plan.retryAfter !== undefined ? { 'retry-after': plan.retryAfter } : {},
          ),
        );
      }
      if (plan.kind === 'effect') {
        const { fault } = plan;
        if (fault.html200)
          return done(
            new HttpResponse(LOGIN_PAGE, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } }),
          );
        if (fault.malformed)
          return done(
            new HttpResponse(MALFORMED_JSON, { status: 200, headers: { 'content-type': 'application/json' } }),
          );
        const bytes =
          fault.body !== undefined ? Buffer.from(JSON.stringify(fault.body), 'utf8') : bodyBytes(def, realm);
        return done(jsonBytes(bytes, fault.truncate ? { [TRUNCATE_HEADER]: '1' } : {}));
      }
      return done(jsonBytes(bodyBytes(def, realm)));
    });
  };

  const writeHandler = (w: (typeof WRITE_ROUTES)[number]): RequestHandler => {
    const method = w.method === 'POST' ? http.post : http.patch;
    return method(`${base}${w.path}`, async ({ request }) => {
      const url = new URL(request.url);
      const { auth, token } = authenticate(request, url);
      const done = (response: Response) =>
        record(request, url, { status: response.status, auth, route: w.id, write: true }, response);
      if (latencyMs) await sleep(latencyMs);
      if (!token) return done(jsonError(401, 'missing or invalid token'));
      if (!token.types.includes(w.tokenType)) return done(jsonError(403, `token lacks type ${w.tokenType}`));
      if (token.readOnly) return done(jsonError(403, 'read-only token'));
      return done(HttpResponse.json({}, { status: 200 }));
    });
  };

  const handlers: RequestHandler[] = [
    ...ROUTES.map(readHandler),
    ...WRITE_ROUTES.map(writeHandler),
    // Anything else under the base URL: 404, and logged.
    http.all(`${base}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const { auth } = authenticate(request, url);
      if (latencyMs) await sleep(latencyMs);
      return record(request, url, { status: 404, auth, route: null, write: false }, jsonError(404, 'not found'));
    }),
  ];

  const checkMatch = (match: FaultMatch) => {
    const { key, route } = faultKey(match);
    if (!catalogIds.has(route)) throw new Error(`fake backend: no catalog route ${route}`);
    return key;
  };

  return {
    handlers,
    dataset,
    release,
    requests,
    setFault(match, fault) {
      faults.set(checkMatch(match), { fault, hits: 0 });
    },
    clearFaults(match) {
      if (match === undefined) faults.clear();
      else faults.delete(checkMatch(match));
    },
    responseBody(routeId, realm) {
      const def = ROUTES.find((r) => r.id === routeId);
      if (!def) throw new Error(`fake backend: no catalog route ${routeId}`);
      return Buffer.from(bodyBytes(def, def.perRealm ? realm : undefined)).toString('utf8');
    },
    warm() {
      for (const def of ROUTES) {
        if (!servedBy(release, def.since)) continue;
        if (def.perRealm) for (const realm of dataset.perRealm.keys()) bodyBytes(def, realm);
        else bodyBytes(def, undefined);
      }
    },
  };
}
