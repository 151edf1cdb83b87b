import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync as readFileSyncText, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { CollectionBuilder, drive, member, team, user } from './collection-builder.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { buildAll } from '../../src/exports/build.js';
import { exportFileName } from '../../src/exports/serialize.js';
import { runDiff } from '../../src/commands/diff.js';
import { readableNames } from '../../src/diff/names.js';
import { FailedError, UsageError } from '../../src/errors.js';
import { silentReporter } from '../../src/progress/reporter.js';
import type { RawCollection } from '../../src/collect/types.js';
import {
  DEFAULT_IGNORE,
  VOLATILE_COLUMNS,
  diffDirectories,
  formatChangeSet,
  resolveIgnore,
  sameValue,
  type ChangeSet,
  type ExportDiff,
} from '../../src/diff/index.js';
import { rec, rewriteExport, snapshotFiles, writeSnapshot, type Rec } from '../helpers/snapshot-dir.js';

// ---------------------------------------------------------------- helpers

/** Writes a raw collection directory (what `collect` writes). */
function writeCollection(dir: string, c: RawCollection): string {
  mkdirSync(dir, { recursive: true });
  for (const r of c.manifest.routes)
    if (r.file !== null) writeFileSync(join(dir, r.file), c.bodies.get(r.route) as Buffer);
  writeFileSync(join(dir, '_collection-manifest.json'), `${JSON.stringify(c.manifest, null, 2)}\n`);
  return dir;
}

/** Writes the snapshot a replay of `c` would publish. */
function writeSnapshotOf(dir: string, c: RawCollection): string {
  mkdirSync(dir, { recursive: true });
  const { files, manifest } = snapshotFiles(c, buildAll(c), 'replay', false, true);
  for (const f of files) writeFileSync(join(dir, f.name), f.content);
  writeFileSync(join(dir, '_snapshot-manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

function exp(cs: ChangeSet, name: string): ExportDiff {
  const d = cs.exports.find((e) => e.export === name);
  if (!d) throw new Error(`no export ${name} in the change set`);
  return d;
}

const u = (id: string, o: Rec = {}) =>
  rec('users', {
    id,
    firstName: 'Ada',
    lastName: 'Abe',
    email: `${id}@example.org`,
    role: 'User',
    permissions: [],
    ...o,
  });
const m = (teamID: string, memberID: string, o: Rec = {}) =>
  rec('team_memberships', {
    teamID,
    teamName: `Team ${teamID}`,
    memberID,
    firstName: 'Bo',
    lastName: 'Berg',
    email: `${memberID}@example.org`,
    perm: 1,
    ...o,
  });
const dr = (id: string, o: Rec = {}) =>
  rec('drives', { id, name: `drive ${id}`, owner: 'u1', capacity: 1024, readers: [], keys: 1, sizeOnDisk: 512, ...o });

// ---------------------------------------------------------------- the comparison

describe('diffDirectories on two snapshots', () => {
  it('reports nothing for two snapshots that differ only in their manifests (time, date, routes)', async () => {
    const root = tmpDir();
    const records = { users: [u('u1'), u('u2')], team_memberships: [m('t1', 'u1')] };
    const a = writeSnapshot(join(root, 'a'), { date: '2026-11-20', records });
    const b = writeSnapshot(join(root, 'b'), { date: '2026-11-21', records });
    const cs = await diffDirectories(a, b);
    expect(cs.hasChanges).toBe(false);
    expect(cs.totals).toEqual({ added: 0, removed: 0, changed: 0, exportsChanged: 0 });
    expect(cs.exports.map((e) => e.export)).toEqual(EXPORTS.map((e) => e.name));
    expect(exp(cs, 'users').counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 2 });
    expect(cs.older).toMatchObject({ dir: a, kind: 'snapshot', date: '2026-11-20', time: '2026-11-20T02:00:00.000Z' });
    expect(formatChangeSet(cs)).toMatch(/^No changes \(15 exports compared\)/);
  });

  it('finds added, removed and changed records with the old and new value of each changed column', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), {
      records: { users: [u('u1'), u('u2', { role: 'User', permissions: [1, 2] }), u('u3')] },
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: { users: [u('u1'), u('u2', { role: 'Admin', permissions: [1, 2, 3] }), u('u4', { firstName: 'Zoë' })] },
    });
    const cs = await diffDirectories(a, b);
    expect(cs.hasChanges).toBe(true);
    const users = exp(cs, 'users');
    expect(users.counts).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1 });
    expect(users.added).toEqual([u('u4', { firstName: 'Zoë' })]);
    expect(users.removed).toEqual([u('u3')]);
    expect(users.changed).toEqual([
      {
        key: { id: 'u2' },
        changes: [
          { column: 'role', old: 'User', new: 'Admin' },
          { column: 'permissions', old: [1, 2], new: [1, 2, 3] },
        ],
      },
    ]);
    expect(cs.totals).toEqual({ added: 1, removed: 1, changed: 1, exportsChanged: 1 });
    expect(exp(cs, 'teams').hasChanges).toBe(false);
  });

  it('compares values exactly and deeply: equal arrays are equal, order and type matter', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), {
      records: {
        users: [
          u('u1', { permissions: [1, 2] }),
          u('u2', { permissions: [1, 2] }),
          u('u3', { role: '1' }),
          u('u4', { email: null }),
        ],
      },
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: {
        users: [
          u('u1', { permissions: [1, 2] }),
          u('u2', { permissions: [2, 1] }),
          u('u3', { role: 1 }),
          u('u4', { email: '' }),
        ],
      },
    });
    const users = exp(await diffDirectories(a, b), 'users');
    expect(users.changed.map((c) => [c.key.id, c.changes.map((x) => x.column)])).toEqual([
      ['u2', ['permissions']],
      ['u3', ['role']],
      ['u4', ['email']],
    ]);
    expect(sameValue([1, [2, 'x']], [1, [2, 'x']])).toBe(true);
    expect(sameValue([1], ['1'])).toBe(false);
    expect(sameValue(0, false)).toBe(false);
    expect(sameValue(null, undefined)).toBe(true);
    expect(sameValue({ a: [1] }, { a: [1] })).toBe(true);
    expect(sameValue({ a: 1 }, { b: 1 })).toBe(false);
  });

  it('matches team_memberships by team and member (a composite key)', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), {
      records: { team_memberships: [m('t1', 'u1'), m('t1', 'u2'), m('t2', 'u1', { perm: 1 })] },
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: { team_memberships: [m('t1', 'u1'), m('t2', 'u1', { perm: 3 }), m('t2', 'u2')] },
    });
    const tm = exp(await diffDirectories(a, b), 'team_memberships');
    expect(tm.key).toEqual(['teamID', 'memberID']);
    expect(tm.added.map((r) => [r.teamID, r.memberID])).toEqual([['t2', 'u2']]);
    expect(tm.removed.map((r) => [r.teamID, r.memberID])).toEqual([['t1', 'u2']]);
    expect(tm.changed).toEqual([
      { key: { teamID: 't2', memberID: 'u1' }, changes: [{ column: 'perm', old: 1, new: 3 }] },
    ]);
  });

  it('keeps composite key parts apart, whatever characters the values hold', async () => {
    const root = tmpDir();
    const mo = (managerID: unknown, objectType: unknown, objectID: unknown) =>
      rec('sub-admin_managed_objects', { managerID, objectType, objectID });
    const both = [
      mo('a\u0000b', 'team', 'c'),
      mo('a', 'b\u0000team', 'c'),
      mo('1', 'team', 'x'),
      mo(1, 'team', 'x'),
      mo('\u0001"1"', 'team', 'x'),
    ];
    const a = writeSnapshot(join(root, 'a'), { records: { 'sub-admin_managed_objects': both } });
    const b = writeSnapshot(join(root, 'b'), { records: { 'sub-admin_managed_objects': [...both].reverse() } });
    const d = exp(await diffDirectories(a, b), 'sub-admin_managed_objects');
    expect(d.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 5 });
  });

  it('matches records with a duplicate key by occurrence', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), { records: { users: [u('u1', { role: 'A' }), u('u1', { role: 'B' })] } });
    const b = writeSnapshot(join(root, 'b'), {
      records: { users: [u('u1', { role: 'A' }), u('u1', { role: 'C' }), u('u1', { role: 'D' })] },
    });
    const users = exp(await diffDirectories(a, b), 'users');
    expect(users.counts).toMatchObject({ added: 1, removed: 0, changed: 1, unchanged: 1 });
    expect(users.changed[0]!.changes).toEqual([{ column: 'role', old: 'B', new: 'C' }]);
  });

  it('does not report a column that is unobtainable on either side', async () => {
    const root = tmpDir();
    // A 3.13.8 backend: keys and hasMessage are null and listed in nullFields; after the upgrade they have values.
    const a = writeSnapshot(join(root, 'a'), {
      records: {
        drives: [
          dr('d1', { keys: null, hasMessage: null, capacity: 1024 }),
          dr('d2', { keys: null, hasMessage: null }),
        ],
      },
      nullFields: [
        ['drives', 'keys'],
        ['drives', 'hasMessage'],
      ],
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: {
        drives: [dr('d1', { keys: 3, hasMessage: true, capacity: 2048 }), dr('d2', { keys: 1, hasMessage: false })],
      },
      nullFields: [['drives', 'snapshotPool']],
    });
    const d = exp(await diffDirectories(a, b), 'drives');
    expect(d.unobtainable).toEqual(['keys', 'snapshotPool', 'hasMessage']);
    expect(d.counts).toMatchObject({ changed: 1, unchanged: 1 });
    expect(d.changed).toEqual([{ key: { id: 'd1' }, changes: [{ column: 'capacity', old: 1024, new: 2048 }] }]);
  });

  it("does not compare a column that one side's files do not hold (another tool version)", async () => {
    const root = tmpDir();
    const old = dr('d1', { keys: 1 });
    delete old.keys;
    const a = writeSnapshot(join(root, 'a'), { records: { drives: [old] } });
    const b = writeSnapshot(join(root, 'b'), { records: { drives: [dr('d1', { keys: 5 })] } });
    const d = exp(await diffDirectories(a, b), 'drives');
    expect(d.unobtainable).toEqual(['keys']);
    expect(d.hasChanges).toBe(false);
  });

  it('reports an export available on one side only as such, not as all records added or removed', async () => {
    const root = tmpDir();
    const pm = (id: string) => rec('project_memberships', { id, projectID: 'p1', userID: id });
    const reason = 'GET /api/projects/memberships was skipped: route added in backend 3.14.1; not served here';
    const a = writeSnapshot(join(root, 'a'), {
      unavailable: { project_memberships: reason, security_levels: reason },
      records: { licensing_servers: [rec('licensing_servers', { id: 's1' })] },
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: { project_memberships: [pm('m1'), pm('m2')] },
      unavailable: { licensing_servers: 'GET /api/external-servers failed: 500', security_levels: reason },
    });
    const cs = await diffDirectories(a, b);
    const pms = exp(cs, 'project_memberships');
    expect(pms).toMatchObject({
      availability: 'newer-only',
      hasChanges: true,
      older: { available: false, count: 0, reason },
      newer: { available: true, count: 2 },
    });
    expect(pms.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 0 });
    expect(pms.added).toEqual([]);
    expect(exp(cs, 'licensing_servers')).toMatchObject({ availability: 'older-only', hasChanges: true, removed: [] });
    expect(exp(cs, 'security_levels')).toMatchObject({ availability: 'neither', hasChanges: false });
    expect(cs.totals).toEqual({ added: 0, removed: 0, changed: 0, exportsChanged: 2 });
    const text = formatChangeSet(cs);
    expect(text).toMatch(
      /project_memberships +available only in newer \(2 records\); older: GET \/api\/projects\/memberships was skipped/,
    );
    expect(text).toMatch(
      /licensing_servers +available only in older \(1 record\); newer: GET \/api\/external-servers failed: 500/,
    );
    expect(text).toMatch(/security_levels +unavailable in both/);
  });

  it('treats an export missing from a manifest as unavailable on that side', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), { records: { users: [u('u1')] } });
    const b = writeSnapshot(join(root, 'b'), { records: { users: [u('u1')] } });
    const path = join(a, '_snapshot-manifest.json');
    const manifest = JSON.parse(readFileSyncText(path, 'utf8'));
    manifest.exports = manifest.exports.filter((e: { export: string }) => e.export !== 'users');
    writeFileSync(path, JSON.stringify(manifest));
    const users = exp(await diffDirectories(a, b), 'users');
    expect(users).toMatchObject({
      availability: 'newer-only',
      older: { available: false, reason: 'not listed in the manifest' },
    });
  });
});

describe('--ignore and the volatile columns', () => {
  const root = tmpDir();
  const up = (id: string, o: Rec) => rec('user_profiles', { id, email: `${id}@example.org`, ...o });
  const a = writeSnapshot(join(root, 'a'), {
    records: {
      users: [u('u1', { role: 'User' })],
      user_profiles: [up('u1', { lastLogin: 1, department: 'IT' })],
      team_memberships: [m('t1', 'u1', { lastLogin: 1 })],
      drives: [dr('d1', { sizeOnDisk: 100, attached: 1, state: 'Ready' })],
    },
  });
  const b = writeSnapshot(join(root, 'b'), {
    records: {
      users: [u('u1', { role: 'Admin' })],
      user_profiles: [up('u1', { lastLogin: 2, department: 'IT' })],
      team_memberships: [m('t1', 'u1', { lastLogin: 2 })],
      drives: [dr('d1', { sizeOnDisk: 200, attached: 2, state: 'Ready' })],
    },
  });

  it('ignores the default volatile columns: a login or a write to a drive is not a change', async () => {
    const cs = await diffDirectories(a, b);
    expect(cs.ignore).toEqual([...DEFAULT_IGNORE]);
    expect(exp(cs, 'user_profiles')).toMatchObject({ hasChanges: false, ignored: ['lastLogin'] });
    expect(exp(cs, 'team_memberships')).toMatchObject({ hasChanges: false, ignored: ['lastLogin'] });
    expect(exp(cs, 'drives')).toMatchObject({ hasChanges: false, ignored: ['attached', 'sizeOnDisk'] });
    expect(exp(cs, 'users').counts.changed).toBe(1);
    expect(cs.totals.exportsChanged).toBe(1);
    expect(formatChangeSet(cs)).toContain(
      'ignored columns: the volatile defaults (lastLogin, drives.sizeOnDisk, … see docs/diff.md); --ignore none compares them\n',
    );
    expect(formatChangeSet(await diffDirectories(a, b, { ignore: ['role'] }))).toContain(
      `ignored columns: ${[...DEFAULT_IGNORE, 'role'].join(', ')}; --ignore none`,
    );
  });

  it('--ignore none compares every column', async () => {
    const cs = await diffDirectories(a, b, { ignore: ['none'] });
    expect(cs.ignore).toEqual([]);
    expect(exp(cs, 'user_profiles').changed).toEqual([
      { key: { id: 'u1' }, changes: [{ column: 'lastLogin', old: 1, new: 2 }] },
    ]);
    expect(exp(cs, 'drives').changed[0]!.changes.map((c) => c.column)).toEqual(['attached', 'sizeOnDisk']);
    expect(cs.totals.exportsChanged).toBe(4);
    expect(formatChangeSet(cs)).not.toContain('ignored columns');
  });

  it('--ignore adds to the defaults; with none it replaces them; export.column limits it to one export', async () => {
    const more = await diffDirectories(a, b, { ignore: ['role'] });
    expect(more.ignore).toEqual([...DEFAULT_IGNORE, 'role']);
    expect(more.hasChanges).toBe(false);
    const only = await diffDirectories(a, b, { ignore: ['none', 'users.role'] });
    expect(only.ignore).toEqual(['users.role']);
    expect(exp(only, 'users').hasChanges).toBe(false);
    expect(exp(only, 'user_profiles').hasChanges).toBe(true);
    const lastLoginOfMembers = await diffDirectories(a, b, { ignore: ['none', 'team_memberships.lastLogin'] });
    expect(exp(lastLoginOfMembers, 'team_memberships').hasChanges).toBe(false);
    expect(exp(lastLoginOfMembers, 'user_profiles').hasChanges).toBe(true);
  });

  it('an --ignore that names no column, or a key column, is a usage error', async () => {
    await expect(diffDirectories(a, b, { ignore: ['lastlogin'] })).rejects.toThrow(UsageError);
    await expect(diffDirectories(a, b, { ignore: ['lastlogin'] })).rejects.toThrow(
      /no export has a column "lastlogin"/,
    );
    await expect(diffDirectories(a, b, { ignore: ['users.nope'] })).rejects.toThrow(
      /export users has no column "nope"; its columns: id, firstName/,
    );
    await expect(diffDirectories(a, b, { ignore: ['nope.role'] })).rejects.toThrow(
      /unknown export "nope"; valid exports: users, teams/,
    );
    await expect(diffDirectories(a, b, { ignore: ['users.id'] })).rejects.toThrow(/key column of users/);
    await expect(diffDirectories(a, b, { ignore: ['memberID'] })).rejects.toThrow(/key column of team_memberships/);
  });

  it('every default volatile column is a non-key column of the catalog', () => {
    const rules = resolveIgnore(undefined, EXPORTS);
    expect(rules.list).toEqual(VOLATILE_COLUMNS.map((v) => v.name));
    expect([...rules.byExport.keys()].sort()).toEqual([
      'drives',
      'resources_by_project',
      'team_memberships',
      'teams',
      'user_profiles',
    ]);
    expect(rules.byExport.get('teams')).toEqual(new Set(['usage_files_cnt', 'usage_files_size', 'usage_drives_used']));
  });
});

describe('--export', () => {
  it('limits the comparison to the named exports, in catalog order', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), { records: { users: [u('u1')], drives: [dr('d1')] } });
    const b = writeSnapshot(join(root, 'b'), { records: { users: [u('u2')], drives: [dr('d2')] } });
    const cs = await diffDirectories(a, b, { exports: ['team_memberships', 'users'] });
    expect(cs.exports.map((e) => e.export)).toEqual(['users', 'team_memberships']);
    expect(cs.totals).toEqual({ added: 1, removed: 1, changed: 0, exportsChanged: 1 });
    const none = await diffDirectories(a, b, { exports: ['teams'] });
    expect(none.hasChanges).toBe(false);
  });

  it('reads only the files of the named exports', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), { records: { users: [u('u1')] } });
    const b = writeSnapshot(join(root, 'b'), { records: { users: [u('u1')] } });
    writeFileSync(join(b, exportFileName('drives', 0, '2026-11-21')), '{ damaged');
    await expect(diffDirectories(a, b, { exports: ['users'] })).resolves.toMatchObject({ hasChanges: false });
    await expect(diffDirectories(a, b)).rejects.toThrow(FailedError);
  });

  it('an unknown export is a usage error listing the valid ones', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'));
    await expect(diffDirectories(a, a, { exports: ['user'] })).rejects.toThrow(UsageError);
    await expect(diffDirectories(a, a, { exports: ['user', 'users'] })).rejects.toThrow(
      `--export: unknown export user; valid exports: ${EXPORTS.map((e) => e.name).join(', ')}`,
    );
  });
});

describe('raw collections', () => {
  function collection(users: ReturnType<typeof user>[], date = '2026-11-21') {
    return new CollectionBuilder({ date })
      .with('users', users)
      .with('teams', [team({ id: 't1', members: [member({ id: 'u1' }), member({ id: 'u2', perm: 2 })] })])
      .with('drives', [drive({ id: 'd1' })])
      .build();
  }

  it('builds a raw collection first, and a snapshot of it is the same data', async () => {
    const root = tmpDir();
    const c = collection([user({ id: 'u1' }), user({ id: 'u2' })]);
    const raw = writeCollection(join(root, 'raw'), c);
    const snap = writeSnapshotOf(join(root, 'snap'), c);
    const cs = await diffDirectories(raw, snap);
    expect(cs.older.kind).toBe('collection');
    expect(cs.newer.kind).toBe('snapshot');
    expect(cs.hasChanges).toBe(false);
    expect(exp(cs, 'team_memberships').counts.unchanged).toBe(2);
    // vm_hardware_setups' always-null columns are unobtainable on both sides.
    expect(exp(cs, 'vm_hardware_setups').unobtainable).toEqual(['externalServers', 'vmType', 'deviceCount']);
  });

  it('diffs two raw collections, and one of each', async () => {
    const root = tmpDir();
    const older = writeCollection(
      join(root, 'raw-a'),
      collection([user({ id: 'u1' }), user({ id: 'u2' })], '2026-11-20'),
    );
    const c = collection([user({ id: 'u1', role: 'Admin' }), user({ id: 'u3' })]);
    const newer = writeCollection(join(root, 'raw-b'), c);
    const newerSnap = writeSnapshotOf(join(root, 'snap-b'), c);
    for (const n of [newer, newerSnap]) {
      const users = exp(await diffDirectories(older, n), 'users');
      expect(users.added.map((r) => r.id)).toEqual(['u3']);
      expect(users.removed.map((r) => r.id)).toEqual(['u2']);
      expect(users.changed).toEqual([{ key: { id: 'u1' }, changes: [{ column: 'role', old: 'User', new: 'Admin' }] }]);
    }
  });

  it('a 3.13.8 collection against a 3.14.1 one: new routes are availability changes, new fields are not changes', async () => {
    const root = tmpDir();
    const old = new CollectionBuilder({ release: '3.13.8' })
      .with('drives', [drive({ id: 'd1' }, '3.13.8')])
      .with('teams', [team({ id: 't1', members: [member({ id: 'u1' }, '3.13.8')] })])
      .build();
    const cur = new CollectionBuilder()
      .with('drives', [drive({ id: 'd1', keys: 4 })])
      .with('teams', [team({ id: 't1', members: [member({ id: 'u1', perm: 2 })] })])
      .build();
    const cs = await diffDirectories(writeCollection(join(root, 'a'), old), writeCollection(join(root, 'b'), cur));
    expect(exp(cs, 'drives')).toMatchObject({ hasChanges: false, availability: 'both' });
    expect(exp(cs, 'drives').unobtainable).toEqual(expect.arrayContaining(['keys', 'hasMessage', 'snapshotPool']));
    expect(exp(cs, 'team_memberships').hasChanges).toBe(false);
    expect(exp(cs, 'project_memberships').availability).toBe('newer-only');
    expect(exp(cs, 'vm_hardware_setups').availability).toBe('newer-only');
  });
});

describe('missing and damaged directories', () => {
  it('a missing directory, a file, or a directory that is neither kind is a usage error', async () => {
    const root = tmpDir();
    const ok = writeSnapshot(join(root, 'ok'));
    writeFileSync(join(root, 'file'), 'x');
    mkdirSync(join(root, 'empty'));
    await expect(diffDirectories(join(root, 'missing'), ok)).rejects.toThrow(/missing does not exist/);
    await expect(diffDirectories(ok, join(root, 'file'))).rejects.toThrow(/is not a directory/);
    await expect(diffDirectories(ok, join(root, 'empty'))).rejects.toThrow(
      /holds neither _snapshot-manifest.json nor _collection-manifest.json/,
    );
    await expect(diffDirectories(ok, join(root, 'empty'))).rejects.toBeInstanceOf(UsageError);
    writeFileSync(join(root, 'empty', '_snapshot-manifest.json'), '{"kind":"collection"}');
    await expect(diffDirectories(ok, join(root, 'empty'))).rejects.toThrow(/not a snapshot manifest \(kind/);
  });

  it('a snapshot whose export file is missing or not an array of records is damaged (exit 1)', async () => {
    const root = tmpDir();
    const ok = writeSnapshot(join(root, 'ok'));
    const bad = writeSnapshot(join(root, 'bad'), { records: { users: [u('u1')] } });
    const name = exportFileName('users', 1, '2026-11-21');
    const file = join(bad, name);
    writeFileSync(file, '[1]');
    await expect(diffDirectories(ok, bad)).rejects.toThrow(
      /users \(11-21-2026\)\.json in .* does not match the sha256 in _snapshot-manifest\.json/,
    );
    rewriteExport(bad, name, '{"id":"u1"}');
    await expect(diffDirectories(ok, bad)).rejects.toThrow(FailedError);
    rewriteExport(bad, name, '[1]');
    await expect(diffDirectories(ok, bad)).rejects.toThrow(/element 0 is not a record/);
    rmSync(file);
    await expect(diffDirectories(ok, bad)).rejects.toThrow(
      /users \(11-21-2026\)\.json in .* does not exist; the snapshot cannot be read/,
    );
  });
});

// ---------------------------------------------------------------- output and exit codes

describe('the summary and runDiff', () => {
  it('names users and teams by the names the snapshots hold, where a key or a value holds their id', async () => {
    const root = tmpDir();
    const users = [u('u1', { firstName: 'Ada', lastName: 'Abe' }), u('u2', { firstName: 'Bo', lastName: 'Berg' })];
    const a = writeSnapshot(join(root, 'a'), { records: { users, team_memberships: [m('t1', 'u1'), m('t1', 'u2')] } });
    const b = writeSnapshot(join(root, 'b'), {
      records: { users, team_memberships: [m('t1', 'u1', { perm: 2 })], drives: [dr('d1', { owner: 'u2' })] },
    });
    const text = formatChangeSet(await diffDirectories(a, b), { names: await readableNames([b, a]) });
    expect(text).toContain('  ~ teamID=t1 member="Ada Abe": perm 1 → 2');
    expect(text).toContain('  − teamID=t1 member="Bo Berg"');
    expect(formatChangeSet(await diffDirectories(a, b))).toContain('  ~ teamID=t1 memberID=u1: perm 1 → 2');
  });

  it('shows times in ISO 8601 UTC, sizes in binary units, and a staging directory by the name it is published as', async () => {
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'svc-snapshot-2026-11-21'), {
      records: {
        team_memberships: [m('t1', 'u1', { lastLogin: 1_763_690_400_000 })],
        drives: [dr('d1', { capacity: 1024 })],
      },
    });
    const b = writeSnapshot(join(root, '.svc-snapshot-2026-11-22.partial-4242-Ab12Cd'), {
      records: {
        team_memberships: [m('t1', 'u1', { lastLogin: 1_763_776_800_000 })],
        drives: [dr('d1', { capacity: 10 * 1024 ** 3 + 512 * 1024 ** 2 })],
      },
    });
    const text = formatChangeSet(await diffDirectories(a, b, { ignore: ['none'] }));
    expect(text).toContain('lastLogin 2025-11-21T02:00:00Z → 2025-11-22T02:00:00Z');
    expect(text).toContain('capacity 1.0 KiB → 10.5 GiB');
    expect(text).toContain(`newer: ${join(root, 'svc-snapshot-2026-11-22')} (snapshot`);
    expect(text).not.toMatch(/partial-|1763690400000|11274289152/);
  });

  it('shows +added −removed ~changed per export, at most 20 records per export, and says how many more there are', async () => {
    const root = tmpDir();
    const many = Array.from({ length: 30 }, (_, i) => u(`u${String(i).padStart(2, '0')}`));
    const a = writeSnapshot(join(root, 'a'), {
      records: { users: many.slice(0, 5), team_memberships: [m('t1', 'u1'), m('t1', 'u2')] },
    });
    const b = writeSnapshot(join(root, 'b'), {
      records: {
        users: [u('u00', { role: 'Admin', lastName: 'Z'.repeat(200) }), ...many.slice(1, 3), ...many.slice(5)],
        team_memberships: [m('t1', 'u1', { perm: 2 })],
      },
    });
    const text = formatChangeSet(await diffDirectories(a, b));
    expect(text).toMatch(/^2 exports changed: \+25 added, −3 removed, ~2 changed\n/);
    expect(text).toMatch(/\n {2}users +\+25 −2 ~1\n/);
    expect(text).toMatch(/\n {2}teams +unchanged\n/);
    expect(text).toContain('\nusers: +25 −2 ~1\n  + id=u05  email=u05@example.org\n');
    expect(text).toContain('  and 8 more records (use --json for all)');
    expect(text.split('\n').filter((l) => /^ {2}[+−~] /.test(l) && l.includes('id=u')).length).toBe(20);
    expect(text).toContain('\nteam_memberships: +0 −1 ~1\n  − teamID=t1 memberID=u2  email=u2@example.org\n');
    expect(text).toContain('  ~ teamID=t1 memberID=u1: perm 1 → 2');
    const small = formatChangeSet(await diffDirectories(a, b), { maxRecords: 100 });
    expect(small).toMatch(/\n {2}~ id=u00: lastName "Abe" → "Z{58}…; role "User" → "Admin"\n/);
    expect(small).not.toContain('more (use --json for all)');
  });

  function deps(cwd: string) {
    const out: string[] = [];
    return {
      out,
      deps: { env: {}, cwd, stdout: (t: string) => void out.push(t), reporter: silentReporter, now: () => new Date() },
    };
  }

  it('exits 0 without changes and 5 with changes; --json prints the whole change set', async () => {
    const root = tmpDir();
    writeSnapshot(join(root, 'a'), { records: { users: [u('u1')] } });
    writeSnapshot(join(root, 'b'), { records: { users: [u('u1', { role: 'Admin' })] } });
    const same = deps(root);
    expect(await runDiff({}, ['a', 'a'], same.deps)).toEqual({ exitCode: 0 });
    expect(same.out.join('')).toMatch(/^No changes/);
    const changed = deps(root);
    expect(await runDiff({ json: true, export: ['users'] }, ['a', 'b'], changed.deps)).toEqual({ exitCode: 5 });
    const json = JSON.parse(changed.out.join(''));
    expect(json).toMatchObject({
      command: 'diff',
      schemaVersion: 1,
      hasChanges: true,
      older: { dir: join(root, 'a') },
      newer: { dir: join(root, 'b') },
    });
    expect(json.exports[0].changed).toEqual([
      { key: { id: 'u1' }, changes: [{ column: 'role', old: 'User', new: 'Admin' }] },
    ]);
    await expect(runDiff({}, ['a'], deps(root).deps)).rejects.toThrow(UsageError);
    await expect(runDiff({ export: ['nope'] }, ['a', 'b'], deps(root).deps)).rejects.toThrow(UsageError);
  });
});

// ---------------------------------------------------------------- docs

describe('docs/diff.md and docs/diff-schema.json', () => {
  const read = (path: string) => readFileSyncText(join(REPO_ROOT, path), 'utf8');
  const doc = read('docs/diff.md');

  it('list every export key and every default volatile column', () => {
    for (const e of EXPORTS) expect(doc).toContain(`| ${e.name} | ${e.key.map((k) => `\`${k}\``).join(', ')} |`);
    for (const v of VOLATILE_COLUMNS) expect(doc).toContain(`\`${v.name}\``);
  });

  it('the schema requires exactly the fields a change set has', async () => {
    const schema = JSON.parse(read('docs/diff-schema.json'));
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const root = tmpDir();
    const a = writeSnapshot(join(root, 'a'), { records: { users: [u('u1'), u('u2')] } });
    const b = writeSnapshot(join(root, 'b'), { records: { users: [u('u1', { role: 'Admin' }), u('u3')] } });
    const cs = JSON.parse(JSON.stringify(await diffDirectories(a, b)));
    expect(Object.keys(cs).sort()).toEqual([...schema.required].sort());
    expect(Object.keys(cs.older).sort()).toEqual([...schema.$defs.side.required].sort());
    expect(Object.keys(cs.exports[0]).sort()).toEqual([...schema.$defs.exportDiff.required].sort());
    expect(Object.keys(cs.exports[0].changed[0]).sort()).toEqual([...schema.$defs.changedRecord.required].sort());
    expect(Object.keys(cs.exports[0].changed[0].changes[0]).sort()).toEqual([...schema.$defs.change.required].sort());
  });
});
