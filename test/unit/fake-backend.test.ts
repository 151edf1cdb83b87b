import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { getResponse, type RequestHandler } from 'msw';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ROUTES, TOKEN_TYPES, routeById, type RouteDef } from '../../src/api/catalog.js';
import * as m from '../../src/api/models.js';
import {
  ALL_TYPES_TOKEN,
  createFakeBackend,
  WRITE_ROUTES,
  type FakeBackend,
  type FakeBackendOptions,
} from '../fake/backend.js';
import { getTestCerts, getUntrustedCerts } from '../fake/certs.js';
import { generateDataset, LARGE_SITE, LARGE_SITE_REALMS, type Dataset } from '../fake/dataset.js';
import { startFakeServer } from '../fake/server.js';
import type * as fake from '../fake/types.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

// The fake's own record types must be assignable to the models' types.
type Assignable<A extends B, B> = A;
export type ModelCheck = [
  Assignable<fake.UserInfo, m.UserInfo>,
  Assignable<fake.TeamInfo, m.TeamInfo>,
  Assignable<fake.UsageInfo, m.UsageInfo>,
  Assignable<fake.DriveInfo, m.DriveInfo>,
  Assignable<fake.ProjectInfo, m.ProjectInfo>,
  Assignable<fake.ProjectMembershipInfo, m.ProjectMembershipInfo>,
  Assignable<fake.SecurityRequirementInfo, m.SecurityRequirementInfo>,
  Assignable<fake.SecurityLevelInfo, m.SecurityLevelInfo>,
  Assignable<fake.UserCertificationInfo, m.UserCertificationInfo>,
  Assignable<fake.ManagedObjectInfo, m.ManagedObjectInfo>,
  Assignable<fake.RealmsResponse, m.RealmsResponse>,
  Assignable<fake.ImageInfo, m.ImageInfo>,
  Assignable<fake.VMConfigInfo, m.VMConfigInfo>,
  Assignable<fake.VirtualMachine, m.VirtualMachine>,
  Assignable<fake.BrickInfoListed, m.BrickInfoListed>,
  Assignable<fake.ExternalServerInfo, m.ExternalServerInfo>,
];

const BASE = 'https://127.0.0.1:8443';
const TOKEN = ALL_TYPES_TOKEN.value;
const DRIVE_ONLY = { value: 'fake-token-drive-only', types: ['Drive' as const] };
const READ_ONLY = { value: 'fake-token-read-only', types: TOKEN_TYPES, readOnly: true };
const TOKENS = [ALL_TYPES_TOKEN, DRIVE_ONLY, READ_ONLY];
const HOSTILE_REALMS: fake.RealmSpec[] = [
  { id: 'libvirt', driver: 'libvirt' },
  { id: 'altvirt', driver: 'altvirt' },
  { id: '../../evil', driver: 'libvirt' },
  { id: 'a/b c', driver: 'altvirt' },
];

function backendWith(opts: Partial<FakeBackendOptions> = {}): FakeBackend {
  return createFakeBackend({ baseUrl: BASE, tokens: TOKENS, ...opts });
}

interface CallOptions {
  token?: string;
  cookie?: string;
  method?: string;
}

/** In-process request through msw's getResponse. */
async function call(backend: FakeBackend, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (opts.cookie !== undefined) headers.cookie = `theme=dark; SVC_TOKEN=${opts.cookie}`;
  let url = BASE + path;
  if (opts.token !== undefined) url += `${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(opts.token)}`;
  const res = await getResponse(backend.handlers, new Request(url, { method: opts.method ?? 'GET', headers }));
  if (!res) throw new Error(`no handler answered ${path}`);
  return res;
}

function urlOf(def: RouteDef, realm?: string): string {
  return def.perRealm ? def.path.replace('{realm}', encodeURIComponent(realm as string)) : def.path;
}

/** Serialisable view of a dataset (the per-realm Map as entries). */
function serialise(d: Dataset): string {
  return JSON.stringify({ ...d, perRealm: [...d.perRealm] });
}

function itemsOf(def: RouteDef, body: unknown): unknown[] {
  return def.shape === 'array' ? (body as unknown[]) : [body];
}

function bodyOf(d: Dataset, def: RouteDef, realm: string): unknown {
  const b = createFakeBackend({ baseUrl: BASE, dataset: d });
  return JSON.parse(b.responseBody(def.id, def.perRealm ? realm : undefined));
}

/** Every referential-integrity problem of a dataset (empty when sound). */
function integrityProblems(d: Dataset): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok && problems.length < 50) problems.push(what);
  };
  const users = new Set(d.users.map((u) => u.id));
  const teams = new Set(d.teams.map((t) => t.id));
  const projects = new Set(d.projects.map((p) => p.id));
  const drives = new Set(d.drives.map((x) => x.id));
  const reqs = new Set(d.securityRequirements.map((r) => r.id));
  const levels = new Set(d.securityLevels.map((l) => l.id));
  const bricks = new Map(d.bricks.map((b) => [b.id, b]));
  const realmIds = new Set(d.realmSpecs.map((r) => r.id));
  const vms = new Set([...d.perRealm.values()].flatMap((r) => r.activeVms.map((v) => v.id)));
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const unique = (ids: string[], what: string) => check(new Set(ids).size === ids.length, `${what} ids are unique`);

  unique(
    d.users.map((u) => u.id),
    'user',
  );
  unique(
    d.teams.map((t) => t.id),
    'team',
  );
  unique(
    d.drives.map((x) => x.id),
    'drive',
  );
  unique(
    d.projects.map((p) => p.id),
    'project',
  );
  unique(
    d.projectMemberships.map((x) => x.id),
    'membership',
  );
  unique(
    d.userCertifications.map((x) => x.id),
    'certification',
  );
  unique(
    d.bricks.map((x) => x.id),
    'brick',
  );
  d.users.forEach((u) => check(uuid.test(u.id), `user id ${u.id} is a uuid`));
  d.teams.forEach((t) => check(/^team\|/.test(t.id) && uuid.test(t.id.slice(5)), `team id ${t.id}`));
  d.projects.forEach((p) => check(/^proj\|/.test(p.id) && uuid.test(p.id.slice(5)), `project id ${p.id}`));
  d.securityRequirements.forEach((r) => check(/^sreq\|/.test(r.id), `requirement id ${r.id}`));
  d.securityLevels.forEach((l) => check(/^slvl\|/.test(l.id), `level id ${l.id}`));

  check(realmIds.has(d.realms.defaultRealm), 'default realm exists');
  check(JSON.stringify(Object.keys(d.realms.realms)) === JSON.stringify([...realmIds]), 'realms map lists every realm');
  for (const t of d.teams) {
    for (const member of t.members) check(users.has(member.id), `member ${member.id} of ${t.id} is a user`);
    unique(
      t.members.map((x) => x.id),
      `members of ${t.id}`,
    );
  }
  for (const x of d.drives) {
    check(users.has(x.owner), `drive ${x.id} owner`);
    check(x.team === undefined || teams.has(x.team), `drive ${x.id} team`);
    check(x.project === undefined || projects.has(x.project), `drive ${x.id} project`);
    check(x.writer === undefined || vms.has(x.writer), `drive ${x.id} writer`);
    x.readers.forEach((r) => check(vms.has(r), `drive ${x.id} reader`));
    check(realmIds.has(x.realmID), `drive ${x.id} realm`);
  }
  for (const p of d.projects) {
    check(p.parent === undefined || projects.has(p.parent), `project ${p.id} parent`);
    check(p.securityLevel === undefined || levels.has(p.securityLevel), `project ${p.id} security level`);
  }
  unique(
    d.projectMemberships.map((x) => `${x.projectID} ${x.userID}`),
    'membership pair',
  );
  for (const x of d.projectMemberships) check(projects.has(x.projectID) && users.has(x.userID), `membership ${x.id}`);
  for (const l of d.securityLevels) l.requirements.forEach((r) => check(reqs.has(r), `level ${l.id} requirement`));
  unique(
    d.userCertifications.map((x) => `${x.requirementID} ${x.userID}`),
    'certification pair',
  );
  for (const c of d.userCertifications) {
    check(reqs.has(c.requirementID) && users.has(c.userID) && users.has(c.modifiedBy), `certification ${c.id}`);
  }
  for (const o of d.managedObjects) {
    check(users.has(o.managerID), 'manager is a user');
    check((o.objectType === 'Team' ? teams : projects).has(o.objectID), `managed ${o.objectType} exists`);
  }
  for (const s of d.externalServers) check(users.has(s.owner), `external server ${s.id} owner`);
  for (const [rows, known, none] of [
    [d.teamUsage, teams, 'no-team'],
    [d.projectUsage, projects, 'no-project'],
  ] as const) {
    check(rows.filter((r) => r.id === none).length === 1, `one ${none} row`);
    check(
      rows.some((r) => !r.exists && !known.has(r.id)),
      `a deleted row besides ${none}`,
    );
    for (const r of rows) check(r.id === none || r.exists === known.has(r.id), `usage row ${r.id} exists flag`);
  }

  const driverOf = new Map(d.realmSpecs.map((r) => [r.id, r.driver]));
  for (const [realm, data] of d.perRealm) {
    const images = new Map(data.images.map((i) => [i.id, i]));
    const configs = new Set(data.configs.map((c) => c.id));
    for (const img of data.images) {
      check(img.parent === undefined || images.has(img.parent), `image ${img.id} parent`);
      check('pool' in img.info === (driverOf.get(realm) === 'libvirt'), `image ${img.id} info matches the driver`);
    }
    for (const c of data.configs) {
      check(bricks.get(c.brick)?.realmID === realm, `config ${c.id} brick of its realm`);
      c.owners.forEach((o) => check(users.has(o), `config ${c.id} owner`));
      check(c.team === undefined || teams.has(c.team), `config ${c.id} team`);
      check(c.project === undefined || projects.has(c.project), `config ${c.id} project`);
      [...c.rwDrives, ...c.roDrives, ...Object.keys(c.driveSlots)].forEach((x) =>
        check(drives.has(x), `config ${c.id} drive`),
      );
      check(c.vmID === undefined || data.activeVms.some((v) => v.id === c.vmID), `config ${c.id} vmID`);
      check(c.lastPing === undefined || c.lastLaunched !== undefined, `config ${c.id} pings only after a launch`);
    }
    for (const v of data.activeVms) {
      check(v.realmID === realm, `vm ${v.id} realm`);
      check(v.config === undefined || configs.has(v.config), `vm ${v.id} config`);
      check(bricks.has(v.brick) && users.has(v.owner), `vm ${v.id} brick and owner`);
      Object.values(v.drives).forEach((x) => check(drives.has(x), `vm ${v.id} drive`));
      check(!v.authedUsers.includes(v.owner) && v.authedUsers.every((u) => users.has(u)), `vm ${v.id} authed users`);
      check(
        v.managers.every((u) => v.authedUsers.includes(u)),
        `vm ${v.id} managers are authed users`,
      );
    }
  }
  for (const b of d.bricks) {
    const data = d.perRealm.get(b.realmID);
    const driver = driverOf.get(b.realmID);
    check(data !== undefined, `brick ${b.id} realm`);
    check(
      (b.libvirt !== undefined) === (driver === 'libvirt') && (b.altvirt !== undefined) === (driver === 'altvirt'),
      `brick ${b.id} config matches the driver`,
    );
    check(users.has(b.creatorID), `brick ${b.id} creator`);
    check(b.imageID === undefined || !!data?.images.some((i) => i.id === b.imageID), `brick ${b.id} image`);
    check(
      b.altvirt === undefined || !!data?.images.some((i) => i.id === b.altvirt?.imageID),
      `brick ${b.id} altvirt image`,
    );
    b.whitelist?.teamIDs.forEach((t) => check(teams.has(t), `brick ${b.id} whitelisted team`));
    b.whitelist?.userIDs.forEach((u) => check(users.has(u), `brick ${b.id} whitelisted user`));
  }
  return problems;
}

describe('the dataset', () => {
  const medium = {
    release: '3.14.1' as const,
    realms: HOSTILE_REALMS,
    sizes: {
      users: 300,
      teams: 20,
      membersPerTeam: 8,
      drives: 400,
      projects: 40,
      projectMemberships: 150,
      certifications: 100,
      managedObjects: 30,
      bricks: 20,
      externalServers: 20,
      imagesPerRealm: 20,
      configsPerRealm: 40,
      activeVmsPerRealm: 20,
      securityRequirements: 5,
      securityLevels: 4,
    },
  };

  it('is the same for the same seed and differs for another seed', () => {
    const a = serialise(generateDataset({ seed: 7, realms: HOSTILE_REALMS }));
    expect(serialise(generateDataset({ seed: 7, realms: HOSTILE_REALMS }))).toBe(a);
    expect(serialise(generateDataset({ seed: 8, realms: HOSTILE_REALMS }))).not.toBe(a);
    // The release only removes fields: the records are otherwise the same.
    const old = generateDataset({ seed: 7, release: '3.13.8' });
    const cur = generateDataset({ seed: 7, release: '3.14.1' });
    expect(old.users).toEqual(cur.users);
    expect(old.drives.map(({ id, owner, capacity }) => [id, owner, capacity])).toEqual(
      cur.drives.map(({ id, owner, capacity }) => [id, owner, capacity]),
    );
  });

  it('serves byte-identical bodies from two backends with the same seed', () => {
    const a = createFakeBackend({ baseUrl: BASE, seed: 'abc' });
    const b = createFakeBackend({ baseUrl: BASE, seed: 'abc' });
    for (const def of ROUTES) expect(a.responseBody(def.id, 'libvirt')).toBe(b.responseBody(def.id, 'libvirt'));
  });

  it('keeps every reference pointing at an existing record', () => {
    expect(integrityProblems(generateDataset())).toEqual([]);
    expect(integrityProblems(generateDataset(medium))).toEqual([]);
    expect(integrityProblems(generateDataset({ ...medium, seed: 99, release: '3.13.8' }))).toEqual([]);
  });

  it('has realistic shapes: timestamps are integers around 2026 and usage rows sum the drives', () => {
    const d = generateDataset(medium);
    const low = Date.UTC(2022, 0, 1);
    const high = Date.UTC(2029, 0, 1);
    for (const u of d.users)
      for (const k of ['joined', 'lastLogin', 'passChanged'] as const) {
        const v = u[k];
        if (v !== undefined) expect(Number.isInteger(v) && v > low && v < high).toBe(true);
      }
    const driveTotal = d.drives.reduce((s, x) => s + x.capacity, 0);
    expect(d.teamUsage.filter((r) => r.exists).reduce((s, r) => s + (r.drives?.size ?? 0), 0)).toBe(driveTotal);
    expect(d.projectUsage.filter((r) => r.exists).reduce((s, r) => s + (r.drives?.size ?? 0), 0)).toBe(driveTotal);
  });

  it('matches the zod model of every route, with no field the model does not know', () => {
    for (const release of ['3.13.8', '3.14.1'] as const) {
      const d = generateDataset({ ...medium, release });
      for (const def of ROUTES) {
        for (const realm of def.perRealm ? d.perRealm.keys() : ['']) {
          for (const [i, item] of itemsOf(def, bodyOf(d, def, realm)).entries()) {
            const parsed = def.item.safeParse(item);
            expect(parsed.success, `${release} ${def.id} ${realm} #${i}: ${parsed.error?.message}`).toBe(true);
            const unknown = Object.keys(item as object).filter((k) => !(k in def.item.shape));
            expect(unknown, `${def.id} #${i}`).toEqual([]);
          }
        }
      }
    }
  });

  it('has every optional field both present and absent somewhere', () => {
    const d = generateDataset({ ...medium, realms: HOSTILE_REALMS });
    // Always present on 3.14.1 (required there), see SINCE_3_14_1.
    const alwaysOn314 = new Set(['keys', 'hasMessage', 'debug', 'joined', 'modified', 'perm']);
    const optionalKeys = (schema: z.ZodObject) =>
      Object.entries(schema.shape)
        .filter(([k, s]) => (s as z.ZodType).safeParse(undefined).success && !alwaysOn314.has(k))
        .map(([k]) => k);
    const lists: Array<[string, z.ZodObject, unknown[]]> = [
      ['users', m.UserInfo, d.users],
      ['teams', m.TeamInfo, d.teams],
      ['members', m.TeamMemberInfo, d.teams.flatMap((t) => t.members)],
      ['drives', m.DriveInfo, d.drives],
      ['projects', m.ProjectInfo, d.projects],
      ['memberships', m.ProjectMembershipInfo, d.projectMemberships],
      ['certifications', m.UserCertificationInfo, d.userCertifications],
      ['bricks', m.BrickInfoListed, d.bricks],
      ['external servers', m.ExternalServerInfo, d.externalServers],
      ['images', m.ImageInfo, [...d.perRealm.values()].flatMap((r) => r.images)],
      ['configs', m.VMConfigInfo, [...d.perRealm.values()].flatMap((r) => r.configs)],
      ['vms', m.VirtualMachine, [...d.perRealm.values()].flatMap((r) => r.activeVms)],
      ['team usage', m.UsageInfo, d.teamUsage],
    ];
    const missing: string[] = [];
    for (const [name, schema, records] of lists) {
      for (const key of optionalKeys(schema)) {
        const present = records.filter((r) => (r as Record<string, unknown>)[key] !== undefined).length;
        if (present === 0 || present === records.length) missing.push(`${name}.${key}: ${present}/${records.length}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('omits every 3.14.1 field on 3.13.8 and has the required ones on 3.14.1', () => {
    const pick = (d: Dataset) => ({
      DriveInfo: d.drives,
      ImageInfo: [...d.perRealm.values()].flatMap((r) => r.images),
      BrickInfoListed: d.bricks,
      TeamMemberInfo: d.teams.flatMap((t) => t.members),
    });
    const old = pick(generateDataset({ release: '3.13.8', realms: HOSTILE_REALMS }));
    const cur = pick(generateDataset({ release: '3.14.1', realms: HOSTILE_REALMS }));
    for (const [model, records] of Object.entries(old)) {
      const fields = m.SINCE_3_14_1[model] ?? [];
      expect(fields.length).toBeGreaterThan(0);
      for (const r of records) for (const f of fields) expect(r, `${model}.${f}`).not.toHaveProperty(f);
    }
    for (const r of cur.DriveInfo)
      expect(r).toMatchObject({ keys: expect.any(Number), hasMessage: expect.any(Boolean) });
    for (const r of cur.BrickInfoListed) expect(r).toMatchObject({ debug: expect.any(Boolean) });
    for (const r of cur.TeamMemberInfo)
      expect(r).toMatchObject({ joined: expect.any(Number), modified: expect.any(Number), perm: expect.any(Number) });
    for (const r of [...cur.BrickInfoListed]) expect(r).not.toHaveProperty('vmType');
    for (const r of [...cur.BrickInfoListed]) expect(r).not.toHaveProperty('externalServers');
  });

  // How fast it is belongs in the benchmark, not here.
  it('generates the large site', () => {
    const d = generateDataset({ sizes: LARGE_SITE, realms: LARGE_SITE_REALMS });
    expect(d.users).toHaveLength(50_000);
    expect(d.teams).toHaveLength(2_000);
    expect(d.teams.every((t) => t.members.length === 25)).toBe(true);
    expect(d.drives).toHaveLength(100_000);
    expect(d.projects).toHaveLength(5_000);
    expect(d.projectMemberships).toHaveLength(60_000);
    expect(d.perRealm.size).toBe(10);
    for (const r of d.perRealm.values()) {
      expect([r.images.length, r.configs.length, r.activeVms.length]).toEqual([1_000, 5_000, 2_000]);
    }
    expect(d.bricks).toHaveLength(2_000);
    expect(d.externalServers).toHaveLength(500);
    expect(d.userCertifications).toHaveLength(20_000);
  });
});

describe('the fake backend in-process', () => {
  it('has one handler per catalog route, the five write routes and a catch-all', () => {
    expect(backendWith().handlers).toHaveLength(ROUTES.length + WRITE_ROUTES.length + 1);
  });

  it('serves every catalog route with the dataset as JSON', async () => {
    const b = backendWith({ realms: HOSTILE_REALMS });
    for (const def of ROUTES) {
      for (const realm of def.perRealm ? b.dataset.perRealm.keys() : [undefined]) {
        const res = await call(b, urlOf(def, realm), { cookie: TOKEN });
        expect(res.status, def.id).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await res.text()).toBe(b.responseBody(def.id, realm));
      }
    }
    expect(JSON.parse(b.responseBody('realms')).realms['../../evil']).toEqual({
      id: '../../evil',
      name: expect.any(String),
      driver: 'libvirt',
    });
  });

  it('answers 401 without a token or with an unknown one, and 403 for a token lacking the type', async () => {
    const b = backendWith();
    expect((await call(b, '/api/users')).status).toBe(401);
    expect((await call(b, '/api/users', { cookie: 'fake-token-unknown' })).status).toBe(401);
    expect((await call(b, '/api/users', { token: '' })).status).toBe(401);
    expect((await call(b, '/api/users', { cookie: DRIVE_ONLY.value })).status).toBe(403);
    expect((await call(b, '/api/drives', { cookie: DRIVE_ONLY.value })).status).toBe(200);
    const body = await (await call(b, '/api/users', { cookie: 'fake-token-unknown' })).json();
    expect(body).toEqual({ error: expect.any(String) });
  });

  it('prefers the URL parameter over the cookie and logs the mechanism, never the token', async () => {
    const b = backendWith();
    expect((await call(b, '/api/users', { token: TOKEN, cookie: 'fake-token-unknown' })).status).toBe(200);
    expect((await call(b, '/api/users', { token: 'fake-token-unknown', cookie: TOKEN })).status).toBe(401);
    expect((await call(b, '/api/users', { cookie: TOKEN })).status).toBe(200);
    expect((await call(b, '/api/users')).status).toBe(401);
    expect(b.requests.map((r) => [r.auth, r.status])).toEqual([
      ['url-param', 200],
      ['url-param', 401],
      ['cookie', 200],
      ['none', 401],
    ]);
    expect(b.requests[0]).toEqual({
      method: 'GET',
      path: '/api/users?token=REDACTED',
      status: 200,
      auth: 'url-param',
      route: 'users',
      write: false,
    });
    expect(JSON.stringify(b.requests)).not.toContain(TOKEN);
  });

  it('answers 404 with a JSON body on every 3.14.1 route of a 3.13.8 backend', async () => {
    const b = backendWith({ release: '3.13.8' });
    for (const def of ROUTES) {
      const res = await call(b, urlOf(def, 'libvirt'), { cookie: TOKEN });
      expect(res.status, def.id).toBe(def.since === '3.14.1' ? 404 : 200);
      if (res.status === 404) expect(await res.json()).toEqual({ error: expect.any(String) });
    }
    expect(ROUTES.filter((r) => r.since === '3.14.1')).toHaveLength(10);
  });

  it('answers 400 for images without a realm and 404 for an unknown realm or path', async () => {
    const b = backendWith({ realms: HOSTILE_REALMS });
    expect((await call(b, '/api/vms/images', { cookie: TOKEN })).status).toBe(400);
    expect((await call(b, '/api/vms/images?realm=nowhere', { cookie: TOKEN })).status).toBe(404);
    expect((await call(b, '/api/vms/nowhere/active', { cookie: TOKEN })).status).toBe(404);
    expect((await call(b, '/api/vms/nowhere/configs', { cookie: TOKEN })).status).toBe(404);
    expect((await call(b, '/api/nothing/here', { cookie: TOKEN })).status).toBe(404);
    expect(b.requests.at(-1)).toMatchObject({ route: null, status: 404 });
  });

  it('serves hostile realm ids URL-encoded in paths and queries', async () => {
    const b = backendWith({ realms: HOSTILE_REALMS });
    for (const realm of ['../../evil', 'a/b c']) {
      const res = await call(b, `/api/vms/${encodeURIComponent(realm)}/active`, { cookie: TOKEN });
      expect(res.status).toBe(200);
      expect((await res.json()) as unknown[]).toEqual(b.dataset.perRealm.get(realm)?.activeVms);
      expect((await call(b, `/api/vms/images?realm=${encodeURIComponent(realm)}`, { cookie: TOKEN })).status).toBe(200);
    }
    expect(b.requests.map((r) => r.realm)).toEqual(['../../evil', '../../evil', 'a/b c', 'a/b c']);
    expect(b.requests[0]?.path).toBe('/api/vms/..%2F..%2Fevil/active');
  });

  it('records the write routes and refuses them to read-only tokens', async () => {
    const b = backendWith();
    for (const w of WRITE_ROUTES) {
      expect((await call(b, w.path, { method: w.method, cookie: READ_ONLY.value })).status).toBe(403);
      expect((await call(b, w.path, { method: w.method, cookie: TOKEN })).status).toBe(200);
      expect((await call(b, w.path, { method: w.method })).status).toBe(401);
    }
    expect(b.requests.filter((r) => r.write).map((r) => r.route)).toEqual(
      WRITE_ROUTES.flatMap((w) => [w.id, w.id, w.id]),
    );
    // Read-only tokens read everything.
    expect((await call(b, '/api/users', { cookie: READ_ONLY.value })).status).toBe(200);
  });

  it('answers a fault status sequence with Retry-After, then recovers', async () => {
    const b = backendWith();
    b.setFault('users', { statuses: [503, 429], retryAfter: '2' });
    const first = await call(b, '/api/users', { cookie: TOKEN });
    expect([first.status, first.headers.get('retry-after')]).toEqual([503, '2']);
    const second = await call(b, '/api/users', { cookie: TOKEN });
    expect([second.status, second.headers.get('retry-after')]).toEqual([429, '2']);
    const third = await call(b, '/api/users', { cookie: TOKEN });
    expect([third.status, third.headers.get('retry-after')]).toEqual([200, null]);
    expect((await call(b, '/api/teams', { cookie: TOKEN })).status).toBe(200);
  });

  it('repeats statuses forever with always, and clearFaults restores the route', async () => {
    const b = backendWith();
    b.setFault('drives', { statuses: [500], always: true });
    for (let i = 0; i < 5; i++) expect((await call(b, '/api/drives', { cookie: TOKEN })).status).toBe(500);
    b.clearFaults('drives');
    expect((await call(b, '/api/drives', { cookie: TOKEN })).status).toBe(200);
    b.setFault('drives', { statuses: [500], always: true });
    b.clearFaults();
    expect((await call(b, '/api/drives', { cookie: TOKEN })).status).toBe(200);
  });

  it('limits a fault to one realm when asked', async () => {
    const b = backendWith({ realms: HOSTILE_REALMS });
    b.setFault({ route: 'vms-configs', realm: 'a/b c' }, { statuses: [502], always: true });
    expect((await call(b, '/api/vms/a%2Fb%20c/configs', { cookie: TOKEN })).status).toBe(502);
    expect((await call(b, '/api/vms/libvirt/configs', { cookie: TOKEN })).status).toBe(200);
  });

  it('serves an HTML login page, a malformed body or a replaced body', async () => {
    const b = backendWith();
    b.setFault('users', { html200: true });
    const html = await call(b, '/api/users', { cookie: TOKEN });
    expect([html.status, html.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await html.text()).toMatch(/^<!DOCTYPE html>/);

    b.setFault('teams', { malformed: true });
    const bad = await call(b, '/api/teams', { cookie: TOKEN });
    expect([bad.status, bad.headers.get('content-type')]).toEqual([200, 'application/json']);
    await expect(bad.json()).rejects.toThrow();

    const drift = [{ ...b.dataset.drives[0], capacity: 'huge', tier: 'gold' }];
    b.setFault('drives', { body: drift });
    expect(await (await call(b, '/api/drives', { cookie: TOKEN })).json()).toEqual(drift);
  });

  it('applies a body fault after the statuses, and only `times` times', async () => {
    const b = backendWith();
    b.setFault('projects', { statuses: [503], html200: true, times: 1 });
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(b, '/api/projects', { cookie: TOKEN });
      statuses.push(`${res.status} ${res.headers.get('content-type')}`);
    }
    expect(statuses).toEqual(['503 application/json', '200 text/html; charset=utf-8', '200 application/json']);
  });

  it('delays an answer by delayMs and every answer by latencyMs', async () => {
    // Order of arrival, not elapsed time: the delayed answer comes after the
    // undelayed one started later, and latency puts a backend behind one without.
    const b = backendWith({ latencyMs: 30 });
    const quick = backendWith();
    b.setFault('users', { delayMs: 300 });
    const arrived: string[] = [];
    const slow = call(b, '/api/users', { cookie: TOKEN }).then(() => arrived.push('delayed users'));
    await call(b, '/api/teams', { cookie: TOKEN }).then(() => arrived.push('teams with latency'));
    await slow;
    expect(arrived).toEqual(['teams with latency', 'delayed users']);
    arrived.length = 0;
    await Promise.all([
      call(b, '/api/teams', { cookie: TOKEN }).then(() => arrived.push('latency')),
      call(quick, '/api/teams', { cookie: TOKEN }).then(() => arrived.push('none')),
    ]);
    expect(arrived).toEqual(['none', 'latency']);
  });

  it('refuses a fault on a route the catalog does not have', () => {
    expect(() => backendWith().setFault('userz', { statuses: [500] })).toThrow(/userz/);
    expect(routeById('users').id).toBe('users');
  });
});

describe('the fake backend over HTTPS', () => {
  let site: FakeSite;
  let agent: Agent;

  beforeAll(async () => {
    site = await startFakeSite({ tokens: TOKENS, realms: HOSTILE_REALMS });
    agent = new Agent({ connect: { ca: getTestCerts().caPem } });
  });
  afterAll(async () => {
    await agent?.close();
    await site?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}, base = site.url) =>
    request(`${base}${path}`, { dispatcher: agent, headers });

  it('serves the dataset to a client trusting the test CA', async () => {
    const res = await get('/api/users', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe(site.backend.responseBody('users'));
    const teams = await get('/api/teams', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(await teams.body.json()).toEqual(site.backend.dataset.teams);
  });

  it('answers 401, 403 and the URL parameter over the wire', async () => {
    const none = await get('/api/users');
    expect(none.statusCode).toBe(401);
    await none.body.dump();
    const wrong = await get('/api/users', { cookie: `SVC_TOKEN=${DRIVE_ONLY.value}` });
    expect(wrong.statusCode).toBe(403);
    await wrong.body.dump();
    const viaUrl = await get(`/api/drives?token=${DRIVE_ONLY.value}`, { cookie: 'SVC_TOKEN=fake-token-unknown' });
    expect(viaUrl.statusCode).toBe(200);
    await viaUrl.body.dump();
    expect(site.backend.requests.slice(-3).map((r) => r.auth)).toEqual(['none', 'cookie', 'url-param']);
  });

  it('serves hostile realm ids and answers 404 JSON for unknown paths', async () => {
    const res = await get('/api/vms/..%2F..%2Fevil/configs', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual(site.backend.dataset.perRealm.get('../../evil')?.configs);
    const missing = await get('/no/such/path', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect([missing.statusCode, missing.headers['content-type']]).toEqual([404, 'application/json']);
    expect(await missing.body.json()).toEqual({ error: 'not found' });
  });

  it('sends Retry-After with injected statuses, then recovers', async () => {
    site.backend.setFault('projects', { statuses: [503], retryAfter: '1' });
    const failed = await get('/api/projects', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect([failed.statusCode, failed.headers['retry-after']]).toEqual([503, '1']);
    await failed.body.dump();
    const ok = await get('/api/projects', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });

  it('serves an HTML login page with status 200', async () => {
    site.backend.setFault('teams', { html200: true, times: 1 });
    const res = await get('/api/teams', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await res.body.text()).toContain('<form');
  });

  it('truncates a body for real: the full length is announced, half arrives, and the client errors', async () => {
    site.backend.setFault('drives', { truncate: true, times: 1 });
    const res = await get('/api/drives', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(site.backend.responseBody('drives')));
    expect(res.headers['x-fake-truncate']).toBeUndefined();
    await expect(res.body.text()).rejects.toThrow();
    const again = await get('/api/drives', { cookie: `SVC_TOKEN=${TOKEN}` });
    expect(await again.body.text()).toBe(site.backend.responseBody('drives'));
  });

  it('is refused by a client that trusts only the test CA when it presents another CA', async () => {
    const untrusted = await startFakeSite({ certs: getUntrustedCerts() });
    try {
      await expect(get('/api/users', {}, untrusted.url)).rejects.toThrow(/certificate|verify|issuer/i);
    } finally {
      await untrusted.close();
    }
  });

  it('closes idle keep-alive connections on close()', async () => {
    const other = await startFakeSite();
    const client = new Agent({ connect: { ca: getTestCerts().caPem }, keepAliveTimeout: 60_000 });
    try {
      const res = await request(`${other.url}/api/users`, {
        dispatcher: client,
        headers: { cookie: `SVC_TOKEN=${TOKEN}` },
      });
      await res.body.dump();
      // Resolves at all (a kept-alive socket would hold it open until the test times out).
      await other.close();
    } finally {
      await client.close();
    }
  });

  it('also runs over plain HTTP', async () => {
    const handlers: RequestHandler[] = [];
    const server = await startFakeServer(handlers, { tls: false });
    try {
      const b = createFakeBackend({ baseUrl: server.url });
      handlers.push(...b.handlers);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await request(`${server.url}/api/realms`, { headers: { cookie: `SVC_TOKEN=${TOKEN}` } });
      expect(await res.body.json()).toEqual(b.dataset.realms);
    } finally {
      await server.close();
    }
  });
});

describe('test/fake/serve.ts', () => {
  it('serves from its own process, prints its URL and CA file, and stops on SIGTERM', async () => {
    const tokens = JSON.stringify([{ value: 'fake-token-serve', types: ['User'] }]);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/fake/serve.ts', '--release', '3.13.8', '--latency', '5', '--tokens-json', tokens],
      {
        cwd: REPO_ROOT,
        // TSX_DISABLE_CACHE: tsx would keep a cache in TMPDIR, which the run must leave empty.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          TMPDIR: process.env.TMPDIR ?? '/tmp',
          TSX_DISABLE_CACHE: '1',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      const { url, caFile } = JSON.parse(line) as { url: string; caFile: string };
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { readFileSync } = await import('node:fs');
      const client = new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } });
      const users = await request(`${url}/api/users`, {
        dispatcher: client,
        headers: { cookie: 'SVC_TOKEN=fake-token-serve' },
      });
      expect(users.statusCode).toBe(200);
      expect(((await users.body.json()) as unknown[]).length).toBeGreaterThan(0);
      const realms = await request(`${url}/api/realms`, {
        dispatcher: client,
        headers: { cookie: 'SVC_TOKEN=fake-token-serve' },
      });
      expect(realms.statusCode).toBe(404); // 3.13.8
      await realms.body.dump();
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
