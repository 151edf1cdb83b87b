import { describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { writeSnapshot } from '../helpers/snapshot-dir.js';
import { findPreviousSnapshot, previousSnapshotBeside } from '../../src/snapshot/beside.js';

// ---------------------------------------------------------------- findPreviousSnapshot

describe('findPreviousSnapshot', () => {
  function snap(parent: string, name: string, time?: string, date?: string): string {
    const dir = join(parent, name);
    writeSnapshot(dir, { date: date ?? '2026-11-21', ...(time !== undefined ? { time } : {}) });
    return dir;
  }

  it('picks the newest older snapshot beside the new one, by manifest time, past every decoy', async () => {
    const parent = tmpDir();
    const out = snap(parent, 'svc-snapshot-2026-11-21', '2026-11-21T02:00:00.000Z');
    snap(parent, 'svc-snapshot-2026-11-19', '2026-11-19T02:00:00.000Z', '2026-11-19');
    snap(parent, 'svc-snapshot-2026-11-20', '2026-11-20T02:00:00.000Z', '2026-11-20');
    // Named older, but taken later: the manifest time decides.
    snap(parent, 'svc-snapshot-2026-11-18', '2026-11-20T23:00:00.000Z', '2026-11-18');
    // Any name (an --out-dir of the admin's own, such as $(date +%F)): the manifest says it is a snapshot.
    const expected = snap(parent, '2026-11-21', '2026-11-21T00:30:00.000Z');
    // Newer than the new snapshot (e.g. a replay of a later collection).
    snap(parent, 'svc-snapshot-2026-11-22', '2026-11-22T02:00:00.000Z', '2026-11-22');
    // Same time as the new one: not older.
    snap(parent, 'svc-snapshot-copy', '2026-11-21T02:00:00.000Z');
    // A raw collection (its own manifest), a staging and a backup dot-directory with a snapshot manifest to tempt it.
    cpSync(join(REPO_ROOT, 'recordings/platform-3.14.1'), join(parent, 'svc-snapshot-raw-2026-11-21'), {
      recursive: true,
    });
    snap(parent, '.svc-snapshot-2026-11-21.partial-123-abc', '2026-11-21T01:30:00.000Z');
    snap(parent, '.svc-snapshot-2026-11-21.previous-123-abcd', '2026-11-21T01:30:00.000Z');
    // Incomplete (published with --allow-partial): not a night before.
    const partial = snap(parent, 'svc-snapshot-2026-11-21-partial', '2026-11-21T01:00:00.000Z');
    const m = JSON.parse(readFileSync(join(partial, '_snapshot-manifest.json'), 'utf8'));
    writeFileSync(join(partial, '_snapshot-manifest.json'), JSON.stringify({ ...m, complete: false }));
    // Not snapshots at all.
    mkdirSync(join(parent, 'svc-snapshot-2026-11-21-empty'));
    mkdirSync(join(parent, 'svc-snapshot-2026-11-21-broken'));
    writeFileSync(join(parent, 'svc-snapshot-2026-11-21-broken', '_snapshot-manifest.json'), '{ "kind": "snapshot", ');
    mkdirSync(join(parent, 'svc-snapshot-2026-11-21-collection'));
    writeFileSync(
      join(parent, 'svc-snapshot-2026-11-21-collection', '_snapshot-manifest.json'),
      '{ "kind": "collection" }',
    );
    writeFileSync(join(parent, 'svc-snapshot-2026-11-21.json'), '{}');
    expect(await findPreviousSnapshot(out)).toBe(expected);
  });

  it('skips a snapshot whose manifest time is not a time: its manifest is damaged', async () => {
    const parent = tmpDir();
    const out = snap(parent, 'svc-snapshot-2026-11-21', '2026-11-21T02:00:00.000Z');
    const expected = snap(parent, 'svc-snapshot-2026-11-19', '2026-11-19T02:00:00.000Z', '2026-11-19');
    writeSnapshot(join(parent, 'svc-snapshot-2026-11-20'), { date: '2026-11-20', time: 'yesterday' });
    expect(await findPreviousSnapshot(out)).toBe(expected);
  });

  it('returns undefined when there is no older snapshot, and accepts a relative path', async () => {
    const parent = tmpDir();
    const out = snap(parent, 'svc-snapshot-2026-11-21', '2026-11-21T02:00:00.000Z');
    expect(await findPreviousSnapshot(out)).toBeUndefined();
    const prev = snap(parent, 'svc-snapshot-2026-11-20', '2026-11-20T02:00:00.000Z');
    const rel = relative(process.cwd(), out);
    expect(await findPreviousSnapshot(rel)).toBe(prev);
    expect(await findPreviousSnapshot(`${out}/`)).toBe(prev);
  });

  it('passes over the snapshots of another site in the same parent, comparing sites as the history database does', async () => {
    const parent = tmpDir();
    const site = (name: string, baseUrl: string, time: string) => {
      const dir = join(parent, name);
      writeSnapshot(dir, { date: time.slice(0, 10), time, baseUrl });
      return dir;
    };
    const a = 'https://a.example.org';
    const out = site('svc-snapshot-a-2026-11-22', a, '2026-11-22T02:00:00.000Z');
    site('svc-snapshot-a-2026-11-20', a, '2026-11-20T02:00:00.000Z');
    // The same site written with a trailing slash (and /api): still its own.
    const expected = site('svc-snapshot-a-2026-11-21', `${a}/api/`, '2026-11-21T02:00:00.000Z');
    // Newer than a's last night, of other sites (one differs from a only by its port, one by a path prefix).
    const b = site('svc-snapshot-b-2026-11-21', 'https://b.example.org', '2026-11-21T03:00:00.000Z');
    site('svc-snapshot-c-2026-11-21', `${a}:8443`, '2026-11-21T02:30:00.000Z');
    site('svc-snapshot-d-2026-11-21', `${a}/other`, '2026-11-21T02:10:00.000Z');
    expect(await findPreviousSnapshot(out)).toBe(expected);
    expect(await previousSnapshotBeside(out)).toEqual({
      dir: expected,
      otherSite: { dir: b, baseUrl: 'https://b.example.org' },
    });
    // In staging: the time and site given, the directory not written yet.
    const staged = join(parent, 'svc-snapshot-b-2026-11-22');
    expect(
      await findPreviousSnapshot(staged, { time: '2026-11-22T03:00:00.000Z', baseUrl: 'https://b.example.org/' }),
    ).toBe(b);
    // Nothing of the site left: nothing compared, the newest other one named.
    expect(
      await previousSnapshotBeside(join(parent, 'svc-snapshot-e'), {
        time: '2026-11-22T03:00:00.000Z',
        baseUrl: 'https://e.example.org',
      }),
    ).toEqual({
      dir: undefined,
      otherSite: { dir: out, baseUrl: a },
    });
    // The same site's newest is the newest of all: nothing passed over.
    expect(
      await previousSnapshotBeside(join(parent, 'svc-snapshot-b-2026-11-21-late'), {
        time: '2026-11-21T04:00:00.000Z',
        baseUrl: 'https://b.example.org',
      }),
    ).toEqual({ dir: b });
    // A new snapshot whose site cannot be told (no manifest, no site given): the newest older of any site, as before.
    expect(await findPreviousSnapshot(join(parent, 'svc-snapshot-x'))).toBe(join(parent, 'svc-snapshot-a-2026-11-22'));
  });
});

describe('the newest night of the site after a snapshot (a re-run)', () => {
  it('is named by its date, whatever the directories are called, of the same site only', async () => {
    const parent = tmpDir();
    const at = (name: string, time: string, baseUrl = 'https://platform.example.org') =>
      writeSnapshot(join(parent, name), { date: time.slice(0, 10), time, baseUrl });
    const night1 = at('one', '2026-11-21T02:00:00.000Z');
    const night2 = at('two', '2026-11-22T02:00:00.000Z');
    const night3 = at('three', '2026-11-23T02:00:00.000Z');
    at('elsewhere', '2026-11-24T02:00:00.000Z', 'https://other.example.org');
    expect(await previousSnapshotBeside(night2)).toEqual({
      dir: night1,
      newer: { dir: night3, date: '2026-11-23' },
    });
    expect(await previousSnapshotBeside(night3)).toEqual({ dir: night2 });
  });
});
