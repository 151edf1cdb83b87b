import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryLoadSummary, HistoryRunsSummary, SnapshotSummary } from '../../src/summaries/schemas.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, startCli, tmpDir } from '../helpers/run-cli.js';
import { NIGHTS, swapWithNext, tamperExport, USERS, writeNight } from '../helpers/history-fixtures.js';
import { postgresUnavailable, startPostgres } from '../helpers/postgres.js';

let site: FakeSite;
beforeAll(async () => {
  site = await startFakeSite({ seed: 15 });
});
afterAll(async () => site.close());

function sameDirectories(a: string, b: string): void {
  const names = readdirSync(a).sort();
  expect(readdirSync(b).sort()).toEqual(names);
  for (const n of names) expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), n).toBe(true);
}

describe('the history database through the real binary', () => {
  it('snapshot --history loads the live snapshot after publishing, and history as-of gives it back byte for byte', async () => {
    const dir = tmpDir();
    const history = join(dir, 'h.sqlite');
    const res = await runCli(
      [
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--out-dir',
        join(dir, 'snap'),
        `--history=${history}`,
        '--json',
      ],
      {
        env: { SVC_TOKEN: ALL_TYPES_TOKEN.value },
      },
    );
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.history).toEqual({ target: history, status: 'loaded' });
    const runs = await runCli(['history', 'runs', '--history', history, '--json']);
    expect(runs.code).toBe(0);
    const parsed = HistoryRunsSummary.parse(JSON.parse(runs.stdout));
    expect(parsed.runs).toHaveLength(1);
    expect(parsed.runs[0]!.counts.users).toBe(summary.exports.find((e) => e.export === 'users')!.count);
    const asOf = await runCli([
      'history',
      'as-of',
      summary.date,
      '--history',
      history,
      '--out-dir',
      join(dir, 'back'),
      '--quiet',
    ]);
    expect(asOf.code).toBe(0);
    sameDirectories(join(dir, 'snap'), join(dir, 'back'));
    // Again: nothing changes.
    const again = await runCli(['history', 'load', join(dir, 'snap'), '--history', history, '--json']);
    expect(again.code).toBe(0);
    expect(HistoryLoadSummary.parse(JSON.parse(again.stdout)).snapshots[0]!.status).toBe('already loaded');
  });

  it('a failed load after publishing exits 1, says the snapshot is published, and leaves it in place', async () => {
    const dir = tmpDir();
    const notDb = join(dir, 'not-a-db.sqlite');
    writeFileSync(notDb, 'plain text, not SQLite '.repeat(100));
    const res = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      '--out-dir',
      join(dir, 'snap'),
      `--history=${notDb}`,
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /snapshot was published to .*snap, but loading it into the history database failed: .*not-a-db\.sqlite/,
    );
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'snap', '_snapshot-manifest.json'))).toBe(true);
  });

  it('loads raw collections (built first), refuses a second snapshot with the same time, and rebuilds the replay byte for byte', async () => {
    const dir = tmpDir();
    const history = join(dir, 'h.sqlite');
    const replay = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      '--out-dir',
      join(dir, 'replayed'),
      '--quiet',
    ]);
    expect(replay.code).toBe(0);
    const load = await runCli([
      'history',
      'load',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      `--history=${history}`,
      '--quiet',
    ]);
    expect(load.code).toBe(0);
    const clash = await runCli([
      'history',
      'load',
      join(REPO_ROOT, 'recordings', 'platform-3.13.8'),
      `--history=${history}`,
    ]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(
      /a different snapshot of https:\/\/platform\.example\.org taken at 2026-11-21T02:00:00\.000Z is already loaded/,
    );
    const back = await runCli([
      'history',
      'as-of',
      '2026-11-21',
      `--history=${history}`,
      '--out-dir',
      join(dir, 'back'),
      '--quiet',
    ]);
    expect(back.code).toBe(0);
    for (const f of readdirSync(join(dir, 'replayed'))) {
      if (f === '_snapshot-manifest.json') continue;
      expect(readFileSync(join(dir, 'back', f)).equals(readFileSync(join(dir, 'replayed', f))), f).toBe(true);
    }
  });

  it('refuses, from the checks before anything is stored, a record laid out otherwise on a first load and records out of order on a later night, loading nothing of either', async () => {
    const dir = tmpDir();
    const history = join(dir, 'h.sqlite');
    const names = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`u${String(i).padStart(4, '0')}`, `Name ${i}`]),
    );
    const night = (date: string) => ({ date, records: { users: USERS(names) } });
    const spaced = writeNight(join(dir, 'spaced'), night('2026-11-05'));
    tamperExport(spaced, 'users', (text) => text.replace('"id": "u2900"', '"id":  "u2900"'));
    const refused = await runCli(['history', 'load', spaced, `--history=${history}`]);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringMatching(/users \(11-5-2026\)\.json in .*spaced is not laid out as svc-snapshot writes exports/),
    ]);
    const good = writeNight(join(dir, 'good'), night('2026-11-05'));
    expect((await runCli(['history', 'load', good, `--history=${history}`, '--quiet'])).code).toBe(0);
    const swapped = writeNight(join(dir, 'swapped'), night('2026-11-06'));
    tamperExport(swapped, 'users', (text) => swapWithNext(text, 'u2000'));
    const later = await runCli(['history', 'load', swapped, `--history=${history}`]);
    expect([later.code, later.stderr]).toEqual([
      1,
      expect.stringMatching(/swapped is not sorted by its key \(record 2002 sorts before the one above it\)/),
    ]);
    const runs = await runCli(['history', 'runs', `--history=${history}`, '--json']);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual(['2026-11-05']);
  });

  it("refuses a night whose users export was edited after publishing, though its hash is the night before's: exit 1 naming the file, the night before stays", async () => {
    const dir = tmpDir();
    const history = join(dir, 'h.sqlite');
    const first = writeNight(join(dir, 'n1'), NIGHTS[0]!);
    const next = writeNight(join(dir, 'n2'), { ...NIGHTS[0]!, date: '2026-11-02' });
    const users = readdirSync(next).find((n) => n.includes('-users '))!;
    writeFileSync(join(next, users), readFileSync(join(next, users), 'utf8').replace('"Bob"', '"Rob"'));
    const res = await runCli(['history', 'load', first, next, `--history=${history}`]);
    expect([res.code, res.stderr]).toEqual([
      1,
      expect.stringMatching(
        /history load stopped at .*n2: 3-users \(11-2-2026\)\.json in .*n2 does not match the sha256 in _snapshot-manifest\.json.*the 1 snapshot\(s\) before it stay loaded/,
      ),
    ]);
    const runs = await runCli(['history', 'runs', `--history=${history}`, '--json']);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual(['2026-11-01']);
  });

  it('waits for another writer between short tries: SIGTERM meanwhile ends it at once (exit 143), and a lock held too long is said as such', async () => {
    const dir = tmpDir();
    const history = join(dir, 'h.sqlite');
    const [first, second] = NIGHTS.slice(0, 2).map((n, i) => writeNight(join(dir, `n${i}`), n));
    expect((await runCli(['history', 'load', first!, `--history=${history}`, '--quiet'])).code).toBe(0);
    const { default: Database } = await import('libsql');
    const holder = new Database(history);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const { child, result } = startCli(['history', 'load', second!, `--history=${history}`]);
      // Once the load has the database open, it is waiting for the lock.
      const opened = () => {
        try {
          return readdirSync(`/proc/${child.pid}/fd`).some(
            (fd) => readlinkSync(`/proc/${child.pid}/fd/${fd}`) === history,
          );
        } catch {
          return false;
        }
      };
      while (!opened()) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGTERM');
      const res = await result;
      expect(res.code).toBe(143);
      expect(res.stderr).toMatch(
        /interrupted by SIGTERM; nothing of the snapshot being loaded is in the history database/,
      );
      const locked = await runCli(['history', 'load', second!, `--history=${history}`]);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toMatch(
        /h\.sqlite is being written by another process .* still locked after 10 s; nothing was loaded/,
      );
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    const runs = await runCli(['history', 'runs', `--history=${history}`, '--json']);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual([NIGHTS[0]!.date]);
  });

  it('usage errors exit 2 without echoing a password, and a missing database exits 1 naming it', async () => {
    const dir = tmpDir();
    const pw = await runCli(['history', 'runs', '--history', 'postgres://svc:Hunter2-secret@127.0.0.1:5432/inv']);
    expect(pw.code).toBe(2);
    expect(pw.stderr + pw.stdout).not.toMatch(/Hunter2/);
    expect(pw.stderr).toMatch(/PGPASSWORD or ~\/\.pgpass/);
    const snapPw = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      '--out-dir',
      join(dir, 'never'),
      '--history=postgres://svc:Hunter2-secret@127.0.0.1/inv',
    ]);
    expect(snapPw.code).toBe(2);
    expect(snapPw.stderr).not.toMatch(/Hunter2/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
    const action = await runCli(['history', 'frobnicate']);
    expect(action.code).toBe(2);
    expect(action.stderr).toMatch(/load, runs, log, as-of/);
    const missing = await runCli(['history', 'runs', '--history', join(dir, 'absent.sqlite')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no history database at .*absent\.sqlite/);
    const badDate = await runCli(['history', 'as-of', '2026-02-30', '--history', join(dir, 'absent.sqlite')]);
    expect(badDate.code).toBe(2);
  });
});

describe.skipIf(postgresUnavailable() !== null)('the history database on PostgreSQL through the real binary', () => {
  it('loads nights, lists them, and gives each back byte for byte', async () => {
    const pg = await startPostgres();
    try {
      const url = await pg.createDatabase('e2e');
      const dir = tmpDir();
      const dirs = NIGHTS.map((n) => writeNight(join(dir, `svc-snapshot-${n.date}`), n));
      const load = await runCli(['history', 'load', ...dirs.reverse(), `--history=${url}`, '--json']);
      expect(load.code).toBe(0);
      expect(HistoryLoadSummary.parse(JSON.parse(load.stdout)).snapshots.map((s) => s.status)).toEqual([
        'loaded',
        'loaded',
        'loaded',
      ]);
      const runs = await runCli(['history', 'runs', `--history=${url}`, '--json']);
      expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual(
        NIGHTS.map((n) => n.date),
      );
      for (const n of NIGHTS) {
        const out = join(dir, `back-${n.date}`);
        const res = await runCli(['history', 'as-of', n.date, `--history=${url}`, '--out-dir', out, '--quiet']);
        expect(res.code).toBe(0);
        sameDirectories(join(dir, `svc-snapshot-${n.date}`), out);
      }
      const log = await runCli(['history', 'log', 'user_profiles', 'u1', `--history=${url}`]);
      expect(log.code).toBe(0);
      expect(log.stdout).toMatch(/changed: state "ACTIVE" → "DEACTIVATED"/);
    } finally {
      pg.stop();
    }
  });

  it('on SIGTERM during a load: exit 143, says the snapshot being loaded was rolled back and the ones before it stay (and, after snapshot --history, where the published snapshot is)', async () => {
    const pg = await startPostgres();
    const { default: pgLib } = await import('pg');
    let holder: InstanceType<typeof pgLib.Client> | undefined;
    try {
      const url = await pg.createDatabase('sigterm');
      const dir = tmpDir();
      const [first, second] = NIGHTS.slice(0, 2).map((n, i) => writeNight(join(dir, `n${i}`), n));
      expect((await runCli(['history', 'load', first!, `--history=${url}`, '--quiet'])).code).toBe(0);
      // Another loader holds the database's load lock: the load waits for it inside its transaction.
      holder = new pgLib.Client({ connectionString: url });
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock($1)', [0x5_3_5_6_4_3]);
      const { child, result } = startCli(['history', 'load', second!, `--history=${url}`]);
      // Until the server shows the load waiting for the lock.
      const waiting = async () =>
        Number(
          (await holder!.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0]
            .count,
        );
      while ((await waiting()) === 0) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGTERM');
      const res = await result;
      expect(res.code).toBe(143);
      expect(res.stderr).toMatch(
        /interrupted by SIGTERM; nothing of the snapshot being loaded is in the history database; the snapshots loaded before it stay loaded/,
      );
      // The server notices the killed client only when its lock wait ends: that backend is ended here.
      await holder.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      while ((await waiting()) > 0) await new Promise((r) => setTimeout(r, 20));
      // The same during snapshot --history, once the snapshot is published: it stays, and the message says where.
      const snap = join(dir, 'snap');
      const second2 = startCli([
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
        '--out-dir',
        snap,
        `--history=${url}`,
      ]);
      while ((await waiting()) === 0) await new Promise((r) => setTimeout(r, 20));
      second2.child.kill('SIGTERM');
      const published = await second2.result;
      expect(published.code).toBe(143);
      expect(published.stderr).toContain(
        `interrupted by SIGTERM; the snapshot was published to ${snap}; a history load in progress is rolled back: load it later with svc-snapshot history load ${snap}`,
      );
      expect(existsSync(join(snap, '_snapshot-manifest.json'))).toBe(true);
      await holder.query('SELECT pg_advisory_unlock($1)', [0x5_3_5_6_4_3]);
      const runs = await runCli(['history', 'runs', `--history=${url}`, '--json']);
      expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual([NIGHTS[0]!.date]);
    } finally {
      await holder?.end();
      pg.stop();
    }
  });
});
