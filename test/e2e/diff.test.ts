import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tmpDir, REPO_ROOT } from '../helpers/run-cli.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { exportFileName } from '../../src/exports/serialize.js';
import { rec, rewriteExport, writeSnapshot, type Rec } from '../helpers/snapshot-dir.js';

// Run `npm run build` first: these tests run bin/svc-snapshot.js, which loads lib/.

// ---------------------------------------------------------------- a validator for the subset of JSON Schema 2020-12 that docs/diff-schema.json uses

type Schema = Record<string, unknown>;
const SCHEMA = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'diff-schema.json'), 'utf8')) as Schema;
const KNOWN_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$defs',
  '$ref',
  'title',
  'description',
  'type',
  'const',
  'enum',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'minimum',
  'anyOf',
]);

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Problems of `value` against `schema`, as `path: message` lines; empty when valid. */
function validate(value: unknown, schema: Schema, path = '$', root: Schema = schema): string[] {
  for (const k of Object.keys(schema))
    if (!KNOWN_KEYWORDS.has(k)) throw new Error(`validator: unsupported keyword ${k} at ${path}`);
  if (typeof schema.$ref === 'string') {
    const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name ? (root.$defs as Record<string, Schema>)[name] : undefined;
    if (!target) throw new Error(`validator: unresolvable $ref ${schema.$ref}`);
    return validate(value, target, path, root);
  }
  const errors: string[] = [];
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((x) => x === t || (x === 'number' && t === 'integer')))
      return [`${path}: ${t} is not ${types.join('|')}`];
  }
  if ('const' in schema && JSON.stringify(value) !== JSON.stringify(schema.const))
    errors.push(`${path}: not ${JSON.stringify(schema.const)}`);
  if (schema.enum && !(schema.enum as unknown[]).includes(value))
    errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (typeof schema.minimum === 'number' && typeof value === 'number' && value < schema.minimum)
    errors.push(`${path}: below ${schema.minimum}`);
  if (schema.anyOf && !(schema.anyOf as Schema[]).some((s) => validate(value, s, path, root).length === 0))
    errors.push(`${path}: matches no anyOf branch`);
  if (t === 'array') {
    const list = value as unknown[];
    if (typeof schema.minItems === 'number' && list.length < schema.minItems)
      errors.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.items)
      list.forEach((v, i) => errors.push(...validate(v, schema.items as Schema, `${path}[${i}]`, root)));
  }
  if (t === 'object') {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of (schema.required ?? []) as string[]) if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...validate(v, props[k], `${path}.${k}`, root));
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected property ${k}`);
      else if (typeof schema.additionalProperties === 'object')
        errors.push(...validate(v, schema.additionalProperties as Schema, `${path}.${k}`, root));
    }
  }
  return errors;
}

// ---------------------------------------------------------------- snapshot directories

const u = (id: string, o: Rec = {}) =>
  rec('users', {
    id,
    firstName: 'Ada',
    lastName: 'Abe',
    email: `${id}@example.org`,
    role: 'User',
    permissions: [1],
    ...o,
  });
const m = (teamID: string, memberID: string, o: Rec = {}) =>
  rec('team_memberships', { teamID, memberID, teamName: 'T', email: `${memberID}@example.org`, perm: 1, ...o });
const d = (id: string, o: Rec = {}) => rec('drives', { id, name: id, capacity: 10, readers: [], keys: 1, ...o });

/** Two snapshots with a change of every kind. */
function everyKind(root: string): [string, string] {
  const a = writeSnapshot(join(root, 'svc-snapshot-2026-11-20'), {
    date: '2026-11-20',
    records: {
      users: [u('u1'), u('u2'), u('u3')],
      team_memberships: [m('t1', 'u1'), m('t1', 'u2'), m('t2', 'u1')],
      drives: [d('d1', { keys: null }), d('d2', { keys: null, sizeOnDisk: 1 })],
      licensing_servers: [rec('licensing_servers', { id: 's1', server: 'lic.example.org', ports: '27000' })],
    },
    unavailable: {
      project_memberships: 'GET /api/projects/memberships was skipped: route added in backend 3.14.1; not served here',
    },
    nullFields: [['drives', 'keys']],
  });
  const b = writeSnapshot(join(root, 'svc-snapshot-2026-11-21'), {
    date: '2026-11-21',
    records: {
      users: [u('u1', { role: 'Admin', permissions: [1, 2] }), u('u2'), u('u4')],
      team_memberships: [m('t1', 'u1', { perm: 2 }), m('t2', 'u1'), m('t2', 'u2')],
      drives: [d('d1', { keys: 7 }), d('d2', { keys: 7, sizeOnDisk: 2 })],
      project_memberships: [rec('project_memberships', { id: 'pm1', projectID: 'p1', userID: 'u1' })],
    },
    unavailable: { licensing_servers: 'GET /api/external-servers failed: 503 after 4 attempts' },
  });
  return [a, b];
}

// ---------------------------------------------------------------- tests

describe('svc-snapshot diff: exit codes and output', () => {
  it('exits 0 and says so when nothing changed', async () => {
    const root = tmpDir();
    const records = { users: [u('u1')], team_memberships: [m('t1', 'u1')] };
    writeSnapshot(join(root, 'old'), { date: '2026-11-20', records });
    writeSnapshot(join(root, 'new'), { date: '2026-11-21', records });
    const res = await runCli(['diff', 'old', 'new'], { cwd: root });
    expect(res.stderr).not.toMatch(/error/i);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^No changes \(15 exports compared\)\n/);
    expect(res.stdout).toContain(`older: ${join(root, 'old')} (snapshot, 2026-11-20T02:00:00Z)`);
  });

  it('notes different sites as the previous snapshot beside is found: a trailing / or /api is the same site', async () => {
    const root = tmpDir();
    const records = { users: [u('u1')] };
    writeSnapshot(join(root, 'old'), { date: '2026-11-20', records, baseUrl: 'https://platform.example.org/api/' });
    writeSnapshot(join(root, 'new'), { date: '2026-11-21', records, baseUrl: 'https://platform.example.org' });
    writeSnapshot(join(root, 'other'), { date: '2026-11-21', records, baseUrl: 'https://other.example.org' });
    const same = await runCli(['diff', 'old', 'new'], { cwd: root });
    expect(same.code).toBe(0);
    expect(same.stdout).not.toMatch(/different sites/);
    expect(same.stderr).not.toMatch(/different sites/);
    const other = await runCli(['diff', 'old', 'other'], { cwd: root });
    expect(other.stdout).toContain(
      'note: the two sides come from different sites (https://platform.example.org/api/ and https://other.example.org)',
    );
    expect(other.stderr).toMatch(/^svc-snapshot: warning: the two sides come from different sites/m);
  });

  it('exits 5 when something changed, with a readable summary per export', async () => {
    const root = tmpDir();
    const [a, b] = everyKind(root);
    const res = await runCli(['diff', a, b]);
    expect(res.code).toBe(5);
    const out = res.stdout;
    expect(out).toMatch(/^4 exports changed: \+2 added, −2 removed, ~2 changed\n/);
    expect(out).toMatch(/\n {2}users +\+1 −1 ~1\n/);
    expect(out).toMatch(/\n {2}team_memberships +\+1 −1 ~1\n/);
    expect(out).toMatch(/\n {2}drives +unchanged\n/);
    expect(out).toMatch(
      /\n {2}project_memberships +available only in newer \(1 record\); older: GET \/api\/projects\/memberships was skipped/,
    );
    expect(out).toMatch(
      /\n {2}licensing_servers +available only in older \(1 record\); newer: GET \/api\/external-servers failed: 503/,
    );
    expect(out).toContain(
      '\nusers: +1 −1 ~1\n  + id=u4  email=u4@example.org\n  − id=u3  email=u3@example.org\n  ~ id=u1: role "User" → "Admin"; permissions [1] → [1,2]\n',
    );
    // Both users are called Ada Abe here: each is told apart by its id.
    expect(out).toContain('  ~ teamID=t1 member="Ada Abe (u1)": perm 1 → 2');
    expect(out).toContain('  + teamID=t2 member="Ada Abe (u2)"  email=u2@example.org');
  });

  it('--json prints the whole change set, valid against docs/diff-schema.json', async () => {
    const root = tmpDir();
    const [a, b] = everyKind(root);
    const res = await runCli(['diff', a, b, '--json']);
    expect(res.code).toBe(5);
    const json = JSON.parse(res.stdout);
    expect(validate(json, SCHEMA)).toEqual([]);
    expect(json.totals).toEqual({ added: 2, removed: 2, changed: 2, exportsChanged: 4 });
    const byName = Object.fromEntries(json.exports.map((e: { export: string }) => [e.export, e]));
    expect(byName.users.changed).toEqual([
      {
        key: { id: 'u1' },
        changes: [
          { column: 'role', old: 'User', new: 'Admin' },
          { column: 'permissions', old: [1], new: [1, 2] },
        ],
      },
    ]);
    expect(byName.team_memberships.removed).toEqual([m('t1', 'u2')]);
    expect(byName.drives).toMatchObject({
      hasChanges: false,
      unobtainable: ['keys'],
      ignored: ['attached', 'sizeOnDisk'],
    });
    expect(byName.project_memberships).toMatchObject({ availability: 'newer-only', added: [] });
    // The validator does catch what the schema rules out.
    expect(validate({ ...json, extra: 1 }, SCHEMA)).toEqual(['$: unexpected property extra']);
    expect(validate({ ...json, exports: [{ ...byName.users, availability: 'maybe' }] }, SCHEMA)).toEqual([
      '$.exports[0].availability: "maybe" not in enum',
    ]);
    expect(validate({ ...json, exports: [{ ...byName.users, added: [{ id: { nested: true } }] }] }, SCHEMA)).toEqual([
      '$.exports[0].added[0].id: matches no anyOf branch',
    ]);

    const same = await runCli(['diff', a, a, '--json', '--export', 'users']);
    expect(same.code).toBe(0);
    const sameJson = JSON.parse(same.stdout);
    expect(validate(sameJson, SCHEMA)).toEqual([]);
    expect(sameJson).toMatchObject({ hasChanges: false, exports: [{ export: 'users', counts: { unchanged: 3 } }] });
  });

  it('--export and --ignore narrow the comparison; --ignore none compares the volatile columns', async () => {
    const root = tmpDir();
    const [a, b] = everyKind(root);
    const users = await runCli(['diff', a, b, '--export', 'users', '--ignore', 'role', '--ignore', 'permissions']);
    expect(users.code).toBe(5);
    expect(users.stdout).toMatch(/^1 export changed: \+1 added, −1 removed, ~0 changed\n/);
    const drives = await runCli(['diff', a, b, '--export', 'drives', '--json']);
    expect(drives.code).toBe(0);
    const all = await runCli(['diff', a, b, '--export', 'drives', '--ignore', 'none', '--json']);
    expect(all.code).toBe(5);
    expect(JSON.parse(all.stdout).exports[0].changed).toEqual([
      { key: { id: 'd2' }, changes: [{ column: 'sizeOnDisk', old: 1, new: 2 }] },
    ]);
  });

  it('exits 2 for a missing or unreadable directory and other usage errors', async () => {
    const root = tmpDir();
    const [a] = everyKind(root);
    mkdirSync(join(root, 'empty'));
    const cases: Array<[string[], RegExp]> = [
      [['diff', a, join(root, 'missing')], /missing does not exist/],
      [['diff', a, join(root, 'empty')], /holds neither _snapshot-manifest.json nor _collection-manifest.json/],
      [['diff', a], /missing required argument 'newer'/],
      [
        ['diff', a, a, '--export', 'userz'],
        /unknown export userz; valid exports: users, teams, team_memberships, drives/,
      ],
      [['diff', a, a, '--ignore', 'lastlogin'], /no export has a column "lastlogin"/],
    ];
    for (const [args, message] of cases) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(res.stdout).toBe('');
    }
  });

  it('exits 1 for a damaged snapshot', async () => {
    const root = tmpDir();
    const [a, b] = everyKind(root);
    const name = exportFileName('users', 3, '2026-11-21');
    writeFileSync(join(b, name), '[{"id": "u1"},');
    const edited = await runCli(['diff', a, b]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toMatch(
      /3-users \(11-21-2026\)\.json in .* does not match the sha256 in _snapshot-manifest\.json/,
    );
    // Damaged as the manifest vouches for it.
    rewriteExport(b, name, '[{"id": "u1"},');
    const res = await runCli(['diff', a, b]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/3-users \(11-21-2026\)\.json in .* is not valid JSON/);
  });
});

describe('svc-snapshot diff of raw collections from the fake site', () => {
  let site: FakeSite | undefined;
  afterEach(async () => {
    await site?.close();
    site = undefined;
  });

  async function collect(s: FakeSite, out: string) {
    const res = await runCli(['collect', '--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out, '--quiet'], {
      env: { SVC_TOKEN: ALL_TYPES_TOKEN.value },
    });
    expect(res.code, res.stderr).toBe(0);
    return out;
  }

  it('builds both collections, mixes with a snapshot, and reports what changed on the site', async () => {
    site = await startFakeSite({ seed: 7 });
    const root = tmpDir();
    const rawA = await collect(site, join(root, 'svc-snapshot-raw-a'));
    const rawSame = await collect(site, join(root, 'svc-snapshot-raw-same'));

    // Overnight: one user changes role, one leaves, one arrives.
    const users = site.backend.dataset.users.map((x) => ({ ...x }));
    expect(users.length).toBeGreaterThan(3);
    const [changed, gone] = [users[0]!, users[1]!];
    const oldRole = changed.role;
    changed.role = oldRole === 'Admin' ? 'User' : 'Admin';
    const arrived = { ...users[2]!, id: 'zz-new-user', email: 'new.user@example.org' };
    site.backend.setFault('users', { body: [users[0], ...users.slice(2), arrived] });
    const rawB = await collect(site, join(root, 'svc-snapshot-raw-b'));

    const same = await runCli(['diff', rawA, rawSame]);
    expect(same.stderr).toBe(`svc-snapshot: comparing ${rawA} with ${rawSame}\n`);
    expect(same.code).toBe(0);

    const res = await runCli(['diff', rawA, rawB, '--json']);
    expect(res.code, res.stderr).toBe(5);
    const json = JSON.parse(res.stdout);
    expect(validate(json, SCHEMA)).toEqual([]);
    expect(json.older).toMatchObject({ kind: 'collection', dir: rawA, baseUrl: site.url });
    const byName = Object.fromEntries(json.exports.map((e: { export: string }) => [e.export, e]));
    expect(byName.users.added.map((r: Rec) => r.id)).toEqual(['zz-new-user']);
    expect(byName.users.removed.map((r: Rec) => r.id)).toEqual([gone.id]);
    expect(byName.users.changed).toEqual([
      { key: { id: changed.id }, changes: [{ column: 'role', old: oldRole, new: changed.role }] },
    ]);
    expect(byName.user_profiles.counts).toMatchObject({ added: 1, removed: 1, changed: 0 });
    expect(json.totals.exportsChanged).toBe(2);

    // A snapshot replayed from the first collection holds the same data as the collection.
    const snapA = join(root, 'svc-snapshot-a');
    const replay = await runCli(['--replay', rawA, '--out-dir', snapA, '--quiet']);
    expect(replay.code, replay.stderr).toBe(0);
    expect((await runCli(['diff', snapA, rawA])).code).toBe(0);
    const mixed = await runCli(['diff', snapA, rawB, '--export', 'users', '--json']);
    expect(mixed.code).toBe(5);
    expect(JSON.parse(mixed.stdout).exports[0]).toMatchObject({ counts: { added: 1, removed: 1, changed: 1 } });
  });
});
