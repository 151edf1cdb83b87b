import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { DomainError, UsageError } from '../../src/errors.js';
import {
  HistoryLoadSummary,
  HistoryLogSummary,
  HistoryRunsSummary,
  SnapshotSummary,
} from '../../src/summaries/schemas.js';
import { runHistory } from '../../src/commands/history.js';
import { openHistory } from '../../src/history/engine.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { captureDeps, NIGHTS, swapWithNext, tamperExport, USERS, writeNight } from '../helpers/history-fixtures.js';
import { tmpDir } from '../helpers/run-cli.js';
import { getLocalhostNameCerts, getTestCerts } from '../fake/certs.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';

function sameDirectories(a: string, b: string): void {
  const names = readdirSync(a).sort();
  expect(readdirSync(b).sort()).toEqual(names);
  for (const n of names) expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), n).toBe(true);
}

async function expectError(p: Promise<unknown>, exitCode: number, pattern: RegExp): Promise<DomainError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect(exitCodeOf(err as DomainError)).toBe(exitCode);
  expect((err as DomainError).message).toMatch(pattern);
  return err as DomainError;
}

const skipPg = postgresUnavailable();

interface Engine {
  name: string;
  skip: string | null;
  setup(): Promise<void>;
  /** A fresh, empty history target. */
  target(name: string): Promise<string>;
  teardown(): void;
}

let pg: TestPostgres | undefined;
const ENGINES: Engine[] = [
  {
    name: 'SQLite',
    skip: null,
    async setup() {},
    async target(name) {
      return join(tmpDir('svc-hist-'), `${name}.sqlite`);
    },
    teardown() {},
  },
  {
    name: 'PostgreSQL',
    skip: skipPg,
    async setup() {
      pg = await startPostgres();
    },
    async target(name) {
      return pg!.createDatabase(name.replace(/[^a-z0-9]/g, '_'));
    },
    teardown() {
      pg?.stop();
    },
  },
];

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`history database on ${engine.name}`, () => {
    let work: string;
    let dirs: string[];
    beforeAll(async () => {
      await engine.setup();
      work = mkdtempSync(join(tmpdir(), 'svc-hist-work-'));
      dirs = NIGHTS.map((n) => writeNight(join(work, `svc-snapshot-${n.date}`), n));
    });
    afterAll(() => {
      engine.teardown();
      rmSync(work, { recursive: true, force: true });
    });

    it('loads nights given out of order, and as-of gives back every night byte for byte, manifest included', async () => {
      const history = await engine.target('roundtrip');
      const c = captureDeps(work);
      const r = await runHistory({ history, json: true }, ['load', dirs[2]!, dirs[0]!, dirs[1]!], c.deps);
      expect(r.exitCode).toBe(EXIT.ok);
      const load = HistoryLoadSummary.parse(JSON.parse(c.out()));
      expect(load.snapshots.map((s) => [s.time.slice(0, 10), s.status])).toEqual(NIGHTS.map((n) => [n.date, 'loaded']));
      for (const [i, n] of NIGHTS.entries()) {
        const out = join(work, `asof-${engine.name}-${i}`);
        const a = captureDeps(work);
        const res = await runHistory({ history, outDir: out, json: true }, ['as-of', n.date], a.deps);
        expect(res.exitCode).toBe(EXIT.ok);
        sameDirectories(dirs[i]!, out);
        expect(SnapshotSummary.parse(JSON.parse(a.out())).date).toBe(n.date);
      }
      // A date between nights stands as the last night before it.
      const later = join(work, `asof-${engine.name}-later`);
      await runHistory(
        { history, outDir: later, quiet: true } as never,
        ['as-of', '2026-12-31'],
        captureDeps(work).deps,
      );
      sameDirectories(dirs[2]!, later);
    });

    it('a NUL in a text value loads (PostgreSQL text cannot hold one) and comes back exactly from as-of', async () => {
      const first = NIGHTS[0]!;
      const night = { ...first, records: { ...first.records, users: USERS({ u1: 'Geno\u0000mics', u2: 'Bob' }) } };
      const dir = writeNight(join(work, `nul-${engine.name}`, `svc-snapshot-${night.date}`), night);
      const history = await engine.target('nul');
      expect((await runHistory({ history }, ['load', dir], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
      const out = join(work, `nul-asof-${engine.name}`);
      expect((await runHistory({ history, outDir: out }, ['as-of', night.date], captureDeps(work).deps)).exitCode).toBe(
        EXIT.ok,
      );
      sameDirectories(dir, out);
    });

    it('loading the same snapshots again changes nothing', async () => {
      const history = await engine.target('idempotent');
      await runHistory({ history }, ['load', ...dirs], captureDeps(work).deps);
      const count = async () => {
        const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
        try {
          const n = await db.all(
            'SELECT (SELECT COUNT(*) FROM users_versions) + (SELECT COUNT(*) FROM runs) + (SELECT COUNT(*) FROM run_exports)',
          );
          return Number(n[0]![0]);
        } finally {
          await db.close();
        }
      };
      const before = await count();
      const c = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['load', ...dirs], c.deps)).exitCode).toBe(EXIT.ok);
      expect(HistoryLoadSummary.parse(JSON.parse(c.out())).snapshots.every((s) => s.status === 'already loaded')).toBe(
        true,
      );
      expect(await count()).toBe(before);
    });

    it('keeps a version per change, closed when the record changes or disappears, and log names the changed columns', async () => {
      const history = await engine.target('versions');
      await runHistory({ history }, ['load', ...dirs], captureDeps(work).deps);
      const log = async (exp: string, ...key: string[]) => {
        const c = captureDeps(work);
        await runHistory({ history, json: true }, ['log', exp, ...key], c.deps);
        return HistoryLogSummary.parse(JSON.parse(c.out()));
      };
      const profile = await log('user_profiles', 'u1');
      expect(profile.versions.map((v) => [v.from.slice(0, 10), v.to?.slice(0, 10) ?? null, v.changed])).toEqual([
        ['2026-11-01', '2026-11-02', []],
        ['2026-11-02', null, ['state', 'stateReason']],
      ]);
      expect(profile.versions[1]!.record.state).toBe('DEACTIVATED');
      // Gone on the second night, back on the third: two versions with a gap between them.
      const bob = await log('users', 'u2');
      expect(bob.versions.map((v) => [v.from.slice(0, 10), v.to?.slice(0, 10) ?? null])).toEqual([
        ['2026-11-01', '2026-11-02'],
        ['2026-11-03', null],
      ]);
      const membership = await log('team_memberships', 't1', 'u2');
      expect(membership.key).toEqual({ teamID: 't1', memberID: 'u2' });
      expect(membership.versions).toHaveLength(1);
      const unchanged = await log('users', 'u3');
      expect(unchanged.versions).toHaveLength(1);
      expect(unchanged.versions[0]!.record.firstName).toBe('Zoë \u0007 "quoted"');
      if (engine.name === 'SQLite') expect(statSync(history).mode & 0o777).toBe(0o600);
      const runs = captureDeps(work);
      await runHistory({ history, json: true }, ['runs'], runs.deps);
      const parsed = HistoryRunsSummary.parse(JSON.parse(runs.out()));
      expect(parsed.runs.map((r) => [r.date, r.counts.users, r.counts.drives])).toEqual([
        ['2026-11-01', 3, 2],
        ['2026-11-02', 2, 2],
        ['2026-11-03', 3, 1],
      ]);
      await expectError(
        runHistory({ history }, ['log', 'team_memberships', 't1'], captureDeps(work).deps),
        EXIT.usage,
        /keyed by teamID, memberID/,
      );
      await expectError(
        runHistory({ history }, ['log', 'nope', 'x'], captureDeps(work).deps),
        EXIT.usage,
        /no export "nope"/,
      );
    });

    it('loads exports of several insert batches and a remainder, row for row, on a first night and the next', async () => {
      const history = await engine.target('batches');
      // 1, 49, 50, 51 and 237 records: below, at and above one multi-row insert, and several with a remainder.
      const names = (n: number, from = 0, tag = '') =>
        Object.fromEntries(
          Array.from({ length: n }, (_, i) => [`u${String(i + from).padStart(4, '0')}`, `N${i + from}${tag}`]),
        );
      const drives = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `d${String(i).padStart(3, '0')}`, team: 't1', capacity: i }));
      const first = writeNight(join(work, `batches-1-${engine.name}`), {
        date: '2026-11-10',
        records: {
          users: USERS(names(237)),
          drives: drives(51),
          teams: [{ id: 't1', name: 'one' }],
          team_memberships: [],
          user_profiles: drives(49).map((d) => ({ id: d.id })),
        },
      });
      // The next night: 30 users changed, 7 gone, 60 new (their versions are inserted in batches after the changed ones).
      const next = writeNight(join(work, `batches-2-${engine.name}`), {
        date: '2026-11-11',
        records: {
          users: USERS({ ...names(200), ...names(30, 100, ' changed'), ...names(60, 1000) }),
          drives: drives(50),
          teams: [{ id: 't1', name: 'one' }],
          user_profiles: drives(49).map((d) => ({ id: d.id })),
        },
      });
      const c = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['load', first, next], c.deps)).exitCode).toBe(EXIT.ok);
      const [one, two] = HistoryLoadSummary.parse(JSON.parse(c.out())).snapshots;
      expect([one!.opened, one!.closed]).toEqual([237 + 51 + 1 + 49, 0]);
      expect([two!.opened, two!.closed]).toEqual([30 + 60, 30 + 37 + 1]);
      for (const [dir, date] of [
        [first, '2026-11-10'],
        [next, '2026-11-11'],
      ] as const) {
        const out = join(work, `batches-asof-${engine.name}-${date}`);
        expect((await runHistory({ history, outDir: out }, ['as-of', date], captureDeps(work).deps)).exitCode).toBe(
          EXIT.ok,
        );
        sameDirectories(dir, out);
      }
      const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
      try {
        const ids = await db.all(
          'SELECT COUNT(*), COUNT(DISTINCT version_id), MIN(version_id), MAX(version_id) FROM users_versions',
        );
        expect(ids[0]!.map(Number)).toEqual([237 + 90, 237 + 90, 1, 237 + 90]);
      } finally {
        await db.close();
      }
    });

    it('keeps a record the backend repeats as two versions, and closes one when it comes once', async () => {
      const history = await engine.target('repeats');
      const users = (n: number) => [
        ...USERS({ u1: 'Ann', u2: 'Bob' }),
        ...Array.from({ length: n }, () => USERS({ u2: 'Bob' })[0]!),
      ];
      const nights = [1, 1, 0, 1].map((n, i) =>
        writeNight(join(work, `repeats-${i}-${engine.name}`), { date: `2026-11-2${i}`, records: { users: users(n) } }),
      );
      const c = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['load', ...nights], c.deps)).exitCode).toBe(EXIT.ok);
      const opened = (s: { opened: number; closed: number }) => [s.opened, s.closed];
      expect(HistoryLoadSummary.parse(JSON.parse(c.out())).snapshots.map(opened)).toEqual([
        [3, 0],
        [0, 0],
        [0, 1],
        [1, 0],
      ]);
      for (const [i, dir] of nights.entries()) {
        const out = join(work, `repeats-asof-${engine.name}-${i}`);
        expect(
          (await runHistory({ history, outDir: out }, ['as-of', `2026-11-2${i}`], captureDeps(work).deps)).exitCode,
        ).toBe(EXIT.ok);
        sameDirectories(dir, out);
      }
    });

    it('skips a partial snapshot with exit 4 unless --allow-partial', async () => {
      const history = await engine.target('partial');
      const partial = writeNight(join(work, `partial-${engine.name}`), {
        date: '2026-11-04',
        complete: false,
        records: { users: USERS({ u9: 'P' }) },
      });
      const c = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['load', dirs[0]!, partial], c.deps)).exitCode).toBe(
        EXIT.incomplete,
      );
      expect(c.err()).toMatch(/partial snapshot .*skipped/);
      const s = HistoryLoadSummary.parse(JSON.parse(c.out()));
      expect(s.snapshots.map((x) => x.status)).toEqual(['loaded', 'skipped']);
      expect(s.complete).toBe(false);
      // A partial snapshot skipped is not read: a damaged file in it stores nothing either way. Loaded with
      // --allow-partial, its files are checked like any other.
      const users = join(
        partial,
        readdirSync(partial).find((n) => n.includes('-users '))!,
      );
      const published = readFileSync(users);
      writeFileSync(users, published.toString('utf8').replace('"P"', '"Q"'));
      expect((await runHistory({ history }, ['load', partial], captureDeps(work).deps)).exitCode).toBe(EXIT.incomplete);
      await expectError(
        runHistory({ history, allowPartial: true }, ['load', partial], captureDeps(work).deps),
        EXIT.failed,
        /users \(11-4-2026\)\.json in .* does not match the sha256/,
      );
      writeFileSync(users, published);
      expect(
        (await runHistory({ history, allowPartial: true }, ['load', partial], captureDeps(work).deps)).exitCode,
      ).toBe(EXIT.ok);
    });

    it('refuses a snapshot whose file fails its hash, and keeps the snapshots loaded before it', async () => {
      const history = await engine.target('hashes');
      const bad = writeNight(join(work, `bad-${engine.name}`), NIGHTS[1]!);
      const file = readdirSync(bad).find((n) => n.includes('-users '))!;
      writeFileSync(join(bad, file), readFileSync(join(bad, file), 'utf8').replace('Ann', 'Anna'));
      await expectError(
        runHistory({ history }, ['load', dirs[0]!, bad], captureDeps(work).deps),
        EXIT.failed,
        /does not match the sha256.*stay loaded/s,
      );
      const c = captureDeps(work);
      await runHistory({ history, json: true }, ['runs'], c.deps);
      expect(HistoryRunsSummary.parse(JSON.parse(c.out())).runs.map((r) => r.date)).toEqual(['2026-11-01']);
    });

    it("checks every export file before storing anything: an edited file is refused even when its hash is the night before's (so the load would skip it)", async () => {
      const history = engine.name === 'SQLite' ? join(work, 'same-hash.sqlite') : await engine.target('samehash');
      const first = writeNight(join(work, `same-a-${engine.name}`), NIGHTS[0]!);
      // The next night: the same records (every export's hash the same as the night before), one user's name edited after publishing.
      const next = writeNight(join(work, `same-b-${engine.name}`), { ...NIGHTS[0]!, date: '2026-11-02' });
      const sameUsers = (dir: string) => readdirSync(dir).find((n) => n.includes('-users '))!;
      expect(readFileSync(join(next, sameUsers(next))).equals(readFileSync(join(first, sameUsers(first))))).toBe(true);
      const file = join(next, sameUsers(next));
      const edited = readFileSync(file, 'utf8').replace('"Ann"', '"Anx"');
      writeFileSync(file, edited);
      expect((await runHistory({ history }, ['load', first], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
      await expectError(
        runHistory({ history }, ['load', next], captureDeps(work).deps),
        EXIT.failed,
        /3-users \(11-2-2026\)\.json in .*same-b-.* does not match the sha256/,
      );
      // With the size in the manifest too: a file of another length is named with both sizes.
      const manifestFile = join(next, '_snapshot-manifest.json');
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
        exports: Array<{ export: string; bytes?: number }>;
      };
      manifest.exports.find((e) => e.export === 'users')!.bytes = Buffer.byteLength(edited) + 1;
      writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      await expectError(
        runHistory({ history }, ['load', next], captureDeps(work).deps),
        EXIT.failed,
        new RegExp(
          `3-users \\(11-2-2026\\)\\.json in .* is ${Buffer.byteLength(edited)} bytes but _snapshot-manifest\\.json says ${Buffer.byteLength(edited) + 1}`,
        ),
      );
      const c = captureDeps(work);
      await runHistory({ history, json: true }, ['runs'], c.deps);
      expect(HistoryRunsSummary.parse(JSON.parse(c.out())).runs.map((r) => r.date)).toEqual(['2026-11-01']);
      // The file put back as published: the night loads, and nothing of the refused tries is in the database.
      writeFileSync(file, edited.replace('"Anx"', '"Ann"'));
      delete manifest.exports.find((e) => e.export === 'users')!.bytes;
      writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      expect((await runHistory({ history }, ['load', next], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
      const out = join(work, `same-back-${engine.name}`);
      expect(
        (await runHistory({ history, outDir: out }, ['as-of', '2026-11-02'], captureDeps(work).deps)).exitCode,
      ).toBe(EXIT.ok);
      for (const n of readdirSync(next))
        if (n !== '_snapshot-manifest.json')
          expect(readFileSync(join(out, n)).equals(readFileSync(join(next, n))), n).toBe(true);
    });

    it('refuses an export laid out otherwise than svc-snapshot writes it, anywhere in a large file, even with a matching hash', async () => {
      const names = Object.fromEntries(
        Array.from({ length: 2500 }, (_, i) => [`u${String(i).padStart(4, '0')}`, `Name ${i}`]),
      );
      const night = { date: '2026-11-05', records: { users: USERS(names) } };
      const good = writeNight(join(work, `layout-good-${engine.name}`), night);
      expect(
        (await runHistory({ history: await engine.target('layoutgood') }, ['load', good], captureDeps(work).deps))
          .exitCode,
      ).toBe(EXIT.ok);
      // Each variant differs from the written layout in one place only; the manifest's hash is made to match it.
      const variants: Record<string, (text: string) => string> = {
        compact: (text) => `${JSON.stringify(JSON.parse(text))}\n`,
        'space in a late record': (text) => text.replace('"id": "u2300"', '"id":  "u2300"'),
        'no final newline': (text) => text.slice(0, -1),
        'text after the array': (text) => `${text}\n`,
        'record boundary moved': (text) => text.replace('  },\n  {\n    "id": "u1000"', '  }, {\n    "id": "u1000"'),
      };
      for (const [name, change] of Object.entries(variants)) {
        const dir = writeNight(join(work, `layout-${name.replace(/ /g, '-')}-${engine.name}`), night);
        const file = readdirSync(dir).find((n) => n.includes('-users '))!;
        expect(tamperExport(dir, 'users', change), name).not.toBe(readFileSync(join(good, file), 'utf8'));
        const history = await engine.target(`layout${Object.keys(variants).indexOf(name)}`);
        await expectError(
          runHistory({ history }, ['load', dir], captureDeps(work).deps),
          EXIT.failed,
          /is not laid out as svc-snapshot writes exports/,
        );
      }
    });

    it('on a later night too, refuses a record laid out otherwise (changed or not) and records out of order, and loads the night as written', async () => {
      const names = Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`u${String(i).padStart(4, '0')}`, `Name ${i}`]),
      );
      const history = await engine.target('layoutnight');
      expect(
        (
          await runHistory(
            { history },
            [
              'load',
              writeNight(join(work, `night-a-${engine.name}`), {
                date: '2026-11-05',
                records: { users: USERS(names) },
              }),
            ],
            captureDeps(work).deps,
          )
        ).exitCode,
      ).toBe(EXIT.ok);
      const night = { date: '2026-11-06', records: { users: USERS({ ...names, u0150: 'Changed' }) } };
      // Each variant parses to the same records as the written file (or the same records in another order).
      const variants: Record<string, [(text: string) => string, RegExp]> = {
        'space in an unchanged record': [
          (text) => text.replace('"id": "u0200"', '"id":  "u0200"'),
          /is not laid out as svc-snapshot writes exports/,
        ],
        'space in the changed record': [
          (text) => text.replace('"firstName": "Changed"', '"firstName":  "Changed"'),
          /is not laid out as svc-snapshot writes exports/,
        ],
        'escaped letter in an unchanged record': [
          (text) => text.replace('"Name 7"', '"\\u004eame 7"'),
          /is not laid out as svc-snapshot writes exports/,
        ],
        'two unchanged records swapped': [
          (text) => swapWithNext(text, 'u0100'),
          /is not sorted by its key \(record 102 sorts before the one above it\)/,
        ],
      };
      for (const [name, [change, message]] of Object.entries(variants)) {
        const dir = writeNight(join(work, `night-b-${name.replace(/ /g, '-')}-${engine.name}`), night);
        let written = '';
        const text = tamperExport(dir, 'users', (t) => change((written = t)));
        expect(text, name).not.toBe(written);
        expect(text.length, name).toBe(
          written.length + (name === 'two unchanged records swapped' ? 0 : name.startsWith('escaped') ? 5 : 1),
        );
        await expectError(runHistory({ history }, ['load', dir], captureDeps(work).deps), EXIT.failed, message);
      }
      const good = writeNight(join(work, `night-b-good-${engine.name}`), night);
      const c = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['load', good], c.deps)).exitCode).toBe(EXIT.ok);
      expect(HistoryLoadSummary.parse(JSON.parse(c.out())).snapshots.map((x) => [x.opened, x.closed])).toEqual([
        [1, 1],
      ]);
      const out = join(work, `night-b-asof-${engine.name}`);
      expect(
        (await runHistory({ history, outDir: out }, ['as-of', '2026-11-06'], captureDeps(work).deps)).exitCode,
      ).toBe(EXIT.ok);
      sameDirectories(good, out);
    });

    it('refuses an export file whose bytes are not UTF-8, even with a matching hash (as-of would write them back otherwise)', async () => {
      const dir = writeNight(join(work, `latin1-${engine.name}`), NIGHTS[0]!);
      const file = readdirSync(dir).find((n) => n.includes('-users '))!;
      // "Zoë" in Latin-1: one byte 0xEB where UTF-8 has two; decoded as UTF-8 it would be U+FFFD.
      const bytes = Buffer.from(readFileSync(join(dir, file), 'utf8').replace('Zoë', 'Zo\u00eb'), 'latin1');
      writeFileSync(join(dir, file), bytes);
      const manifest = JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as {
        exports: { export: string; sha256: string }[];
      };
      manifest.exports.find((e) => e.export === 'users')!.sha256 = createHash('sha256').update(bytes).digest('hex');
      writeFileSync(join(dir, '_snapshot-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      await expectError(
        runHistory({ history: await engine.target('latin1') }, ['load', dir], captureDeps(work).deps),
        EXIT.failed,
        /users \(11-1-2026\)\.json in .* is not UTF-8 text/,
      );
    });

    it('refuses an export file reached through a symbolic link', async () => {
      const history = await engine.target('symlink');
      const linked = writeNight(join(work, `link-${engine.name}`), NIGHTS[0]!);
      const file = readdirSync(linked).find((n) => n.includes('-users '))!;
      const elsewhere = join(work, `elsewhere-${engine.name}.json`);
      writeFileSync(elsewhere, readFileSync(join(linked, file)));
      unlinkSync(join(linked, file));
      symlinkSync(elsewhere, join(linked, file));
      await expectError(
        runHistory({ history }, ['load', linked], captureDeps(work).deps),
        EXIT.failed,
        /symbolic link/,
      );
    });

    it('a failure in the middle of a snapshot leaves nothing of it in the database', async () => {
      const history = await engine.target('midload');
      await runHistory({ history }, ['load', dirs[0]!], captureDeps(work).deps);
      const fail = async (name: string) => {
        if (name !== 'drives') return;
        if (engine.name === 'PostgreSQL') {
          // The connection is cut from the server side, as a restart or a network failure would.
          const { default: pgLib } = await import('pg');
          const admin = new pgLib.Client({ connectionString: history.replace(/\/[^/]+$/, '/postgres') });
          await admin.connect();
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'svc-snapshot'",
          );
          await admin.end();
        } else throw new Error('simulated failure after drives');
      };
      await expectError(
        runHistory({ history }, ['load', dirs[1]!], captureDeps(work).deps, fail),
        EXIT.failed,
        /history load stopped at .*2026-11-02: .*(rolled back|nothing of this snapshot was loaded)/s,
      );
      const c = captureDeps(work);
      await runHistory({ history, json: true }, ['runs'], c.deps);
      expect(HistoryRunsSummary.parse(JSON.parse(c.out())).runs.map((r) => r.date)).toEqual(['2026-11-01']);
      // And the next load goes through as if the failed one had never started.
      await runHistory({ history }, ['load', dirs[1]!, dirs[2]!], captureDeps(work).deps);
      const out = join(work, `midload-asof-${engine.name}`);
      await runHistory({ history, outDir: out }, ['as-of', '2026-11-02'], captureDeps(work).deps);
      sameDirectories(dirs[1]!, out);
    });

    it('asks for --site when the database holds several sites, naming them, and refuses a site mismatch', async () => {
      const history = await engine.target('sites');
      const other = writeNight(join(work, `other-${engine.name}`), {
        ...NIGHTS[0]!,
        baseUrl: 'https://other.example.org',
      });
      await runHistory({ history }, ['load', dirs[0]!, other], captureDeps(work).deps);
      await expectError(
        runHistory({ history }, ['runs'], captureDeps(work).deps),
        EXIT.usage,
        /several sites.*https:\/\/other\.example\.org.*https:\/\/platform\.example\.org/,
      );
      const c = captureDeps(work);
      await runHistory({ history, json: true, site: 'https://other.example.org/api' }, ['runs'], c.deps);
      expect(HistoryRunsSummary.parse(JSON.parse(c.out())).runs.map((r) => r.baseUrl)).toEqual([
        'https://other.example.org',
      ]);
      await expectError(
        runHistory({ history, site: 'https://platform.example.org' }, ['load', other], captureDeps(work).deps),
        EXIT.usage,
        /is a snapshot of https:\/\/other\.example\.org, not of --site/,
      );
      await expectError(
        runHistory({ history, site: 'https://third.example.org' }, ['runs'], captureDeps(work).deps),
        EXIT.usage,
        /has no snapshots/,
      );
    });

    it('refuses a database written by a newer version of the tool, naming it', async () => {
      const history = await engine.target('newer');
      await runHistory({ history }, ['load', dirs[0]!], captureDeps(work).deps);
      const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
      await db.run("UPDATE history_meta SET value = ? WHERE name = 'schema_version'", ['99']);
      await db.run("UPDATE history_meta SET value = ? WHERE name = 'written_by'", ['9.9.9']);
      await db.close();
      await expectError(
        runHistory({ history }, ['runs'], captureDeps(work).deps),
        EXIT.failed,
        /written by svc-snapshot 9\.9\.9 with history schema 99/,
      );
      await expectError(
        runHistory({ history }, ['load', dirs[1]!], captureDeps(work).deps),
        EXIT.failed,
        /upgrade svc-snapshot/,
      );
    });
  });
}

describe('history targets', () => {
  const cwd = tmpdir();
  it('refuses a PostgreSQL URL with a password without repeating any of it', async () => {
    for (const url of [
      'postgres://svc:s3cr%21t-pw@db.example.org:5432/inv',
      'postgresql://svc:s3cr!t-pw@db.example.org/inv',
      'postgres://svc:s3cr!t-pw@[bad',
    ]) {
      const err = await expectError(
        runHistory({ history: url }, ['runs'], captureDeps(cwd).deps),
        EXIT.usage,
        /PGPASSWORD|cannot be parsed/,
      );
      expect(err.message).not.toMatch(/s3cr/);
    }
  });

  it('reads other forms as a SQLite path, and refuses other URL schemes and unsupported sslmodes', () => {
    expect(parseHistoryTarget(true, '/srv')).toMatchObject({
      engine: 'sqlite',
      path: '/srv/svc-snapshot-history.sqlite',
    });
    expect(parseHistoryTarget('postgres://svc@db.example.org/inv?sslmode=require', '/srv')).toMatchObject({
      engine: 'postgres',
      sslmode: 'verify-full',
      port: 5432,
    });
    expect(parseHistoryTarget('postgres://svc@127.0.0.1:5433/inv', '/srv')).toMatchObject({
      sslmode: 'disable',
      port: 5433,
    });
    expect(() => parseHistoryTarget('mysql://svc@db/inv', '/srv')).toThrow(UsageError);
    expect(() => parseHistoryTarget('postgres://svc@db/inv?sslmode=prefer', '/srv')).toThrow(
      /sslmode=prefer is not supported/,
    );
  });

  it('names a target that cannot be opened: a missing directory, a file that is not SQLite, an unreachable server', async () => {
    const dir = tmpDir('svc-hist-bad-');
    const night = writeNight(join(dir, 'n1'), NIGHTS[0]!);
    await expectError(
      runHistory({ history: join(dir, 'no', 'such', 'h.sqlite') }, ['load', night], captureDeps(dir).deps),
      EXIT.failed,
      /no\/such.*does not exist/,
    );
    const notDb = join(dir, 'not.sqlite');
    writeFileSync(notDb, 'this is not a database, just text '.repeat(200));
    await expectError(
      runHistory({ history: notDb }, ['load', night], captureDeps(dir).deps),
      EXIT.failed,
      /not\.sqlite/,
    );
    await expectError(
      runHistory({ history: join(dir, 'absent.sqlite') }, ['runs'], captureDeps(dir).deps),
      EXIT.failed,
      /no history database at .*absent\.sqlite/,
    );
    await expectError(
      runHistory({ history: 'postgres://svc@127.0.0.1:1/inv' }, ['runs'], captureDeps(dir).deps),
      EXIT.failed,
      /postgres:\/\/svc@127\.0\.0\.1:1\/inv cannot be opened/,
    );
  });
});

describe.skipIf(skipPg !== null)('history on PostgreSQL over TLS', () => {
  let tlsPg: TestPostgres;
  let work: string;
  beforeAll(async () => {
    const certs = getTestCerts();
    tlsPg = await startPostgres({ tls: { certPem: certs.certPem, keyPem: certs.keyPem } });
    work = mkdtempSync(join(tmpdir(), 'svc-hist-tls-'));
  });
  afterAll(() => {
    tlsPg?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('verifies the server against --ca-file with sslmode=verify-full, and names the target when it cannot', async () => {
    const url = `${await tlsPg.createDatabase('tls')}?sslmode=verify-full`;
    const night = writeNight(join(work, 'n1'), NIGHTS[0]!);
    const refused = await expectError(
      runHistory({ history: url }, ['load', night], captureDeps(work).deps),
      EXIT.failed,
      /postgres:\/\/postgres@127\.0\.0\.1:\d+\/tls cannot be opened: .*(certificate|self.signed)/i,
    );
    expect(refused.message).not.toMatch(/\?sslmode/);
    const c = captureDeps(work);
    expect(
      (await runHistory({ history: url, caFile: getTestCerts().caFile, json: true }, ['load', night], c.deps)).exitCode,
    ).toBe(EXIT.ok);
    expect(HistoryLoadSummary.parse(JSON.parse(c.out())).snapshots[0]!.status).toBe('loaded');
  });

  it('checks the certificate against the address in the URL: one for the name localhost only is refused at 127.0.0.1', async () => {
    const certs = getLocalhostNameCerts();
    const other = await startPostgres({ tls: { certPem: certs.certPem, keyPem: certs.keyPem } });
    try {
      const url = `${await other.createDatabase('names')}?sslmode=verify-full`;
      const night = writeNight(join(work, 'n2'), NIGHTS[0]!);
      await expectError(
        runHistory({ history: url, caFile: certs.caFile }, ['load', night], captureDeps(work).deps),
        EXIT.failed,
        /cannot be opened: .*IP: 127\.0\.0\.1 is not in the cert's list/i,
      );
    } finally {
      other.stop();
    }
  });
});
