import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { DomainError } from '../../src/errors.js';
import { HistoryLogSummary, HistoryRunsSummary } from '../../src/summaries/schemas.js';
import { runHistory } from '../../src/commands/history.js';
import { openHistory, type HistoryDb } from '../../src/history/engine.js';
import { EXPORT_TABLES } from '../../src/history/schema.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { TOOL } from '../../src/version.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import {
  copyHistoryV2,
  HISTORY_V3,
  RECORDED_NIGHTS,
  replayHistoryFixture,
  replayHistoryV2,
} from '../helpers/history-v2.js';
import { manifestsIn, verifyDir } from '../../src/verify/verify-dir.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';

/** The history schema this version writes. */
const SCHEMA_NOW = '5';

// The drive the second night grew to twice its capacity (scripts/record-platform.ts).
const GROWN_DRIVE = 'e2169453-48cb-47af-9b62-4d8311462d28';

function sameDirectories(a: string, b: string): void {
  const names = readdirSync(a).sort();
  expect(names.length).toBeGreaterThan(15);
  expect(readdirSync(b).sort()).toEqual(names);
  for (const n of names) expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), n).toBe(true);
}

let pg: TestPostgres | undefined;
const ENGINES = [
  { name: 'SQLite', skip: null as string | null },
  { name: 'PostgreSQL', skip: postgresUnavailable() },
];

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`history schema 2 → 4 on ${engine.name}`, () => {
    let work: string;
    let fresh: string;
    let n = 0;
    /** The committed schema 2 database, as a new target of this engine. */
    const v2 = async (): Promise<string> => {
      const name = `v2_${++n}`;
      if (engine.name === 'SQLite') return copyHistoryV2(join(work, `${name}.sqlite`));
      const url = await pg!.createDatabase(name);
      await replayHistoryV2(url, work);
      return url;
    };
    const open = (history: string) => openHistory(parseHistoryTarget(history, work), { mustExist: true });
    const withDb = async <T>(history: string, fn: (db: HistoryDb) => Promise<T>): Promise<T> => {
      const db = await open(history);
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };
    /** Every row of the history's tables, in a fixed order: what a migrated database must share with a fresh load. */
    const contents = (history: string) =>
      withDb(history, async (db) => {
        const out: Record<string, unknown[][]> = {};
        for (const t of EXPORT_TABLES) out[t.table] = await db.all(`SELECT * FROM ${t.table} ORDER BY version_id`);
        for (const t of EXPORT_TABLES) out[t.view] = await db.all(`SELECT * FROM ${t.view} ORDER BY 1, 2, 3, 4`);
        out.runs = await db.all('SELECT * FROM runs ORDER BY time');
        out.run_manifests = await db.all('SELECT * FROM run_manifests ORDER BY time');
        out.run_exports = await db.all('SELECT * FROM run_exports ORDER BY time, export');
        out.run_files = await db.all('SELECT * FROM run_files ORDER BY time, name');
        out.history_meta = await db.all('SELECT * FROM history_meta ORDER BY name');
        return out;
      });
    const meta = (history: string) =>
      withDb(history, async (db) =>
        Object.fromEntries(
          (await db.all('SELECT name, value FROM history_meta')).map((r) => [String(r[0]), String(r[1])]),
        ),
      );

    beforeAll(async () => {
      if (engine.name === 'PostgreSQL') pg = await startPostgres();
      work = mkdtempSync(join(tmpdir(), 'svc-hist-migrate-'));
      fresh = engine.name === 'SQLite' ? join(work, 'fresh.sqlite') : await pg!.createDatabase('fresh');
      await runHistory({ history: fresh }, ['load', ...RECORDED_NIGHTS], captureDeps(work).deps);
    });
    afterAll(() => {
      pg?.stop();
      pg = undefined;
      rmSync(work, { recursive: true, force: true });
    });

    it('migrates a database of the release before on its first open, in one transaction, to what loading the same snapshots now makes', async () => {
      const history = await v2();
      expect(await meta(history)).toEqual({ schema_version: '2', written_by: '1.0.0' });
      // A read-only command opens it first: the upgrade is not left to the next load.
      const runs = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['runs'], runs.deps)).exitCode).toBe(EXIT.ok);
      expect(HistoryRunsSummary.parse(JSON.parse(runs.out())).runs.map((r) => [r.date, r.source, r.key])).toEqual([
        ['2026-11-21', 'replay', null],
        ['2026-11-22', 'replay', null],
      ]);
      expect(await meta(history)).toEqual({ schema_version: SCHEMA_NOW, written_by: TOOL.version });
      expect(await contents(history)).toEqual(await contents(fresh));
      // as-of gives back every night byte for byte (checked against the hashes the release before recorded), as a fresh load does.
      for (const date of ['2026-11-21', '2026-11-22']) {
        const migrated = join(work, `asof-${n}-${date}`);
        const loaded = join(work, `asof-fresh-${n}-${date}`);
        expect(
          (await runHistory({ history, outDir: migrated }, ['as-of', date], captureDeps(work).deps)).exitCode,
        ).toBe(EXIT.ok);
        expect(
          (await runHistory({ history: fresh, outDir: loaded }, ['as-of', date], captureDeps(work).deps)).exitCode,
        ).toBe(EXIT.ok);
        sameDirectories(loaded, migrated);
      }
      const log = captureDeps(work);
      expect((await runHistory({ history, json: true }, ['log', 'drives', GROWN_DRIVE], log.deps)).exitCode).toBe(
        EXIT.ok,
      );
      const versions = HistoryLogSummary.parse(JSON.parse(log.out())).versions;
      expect(versions.map((v) => v.changed.includes('capacity'))).toEqual([false, true]);
      expect(versions.map((v) => v.record.capacity)).toEqual([4294967296000, 8589934592000]);
      // The columns are typed: numbers compare as numbers, timestamps have their UTC time in the view.
      await withDb(history, async (db) => {
        const [row] = await db.all(
          'SELECT capacity, capacity > 5000000000000, "changed_utc", "hasSnapshot" FROM drives WHERE id = ?',
          [GROWN_DRIVE],
        );
        expect(Number(row![0])).toBe(8589934592000);
        expect([true, 1]).toContain(row![1]);
        expect(new Date(row![2] as string | Date).toISOString()).toBe('2026-11-22T02:00:00.000Z');
        expect([false, true, 0, 1]).toContain(row![3]);
        expect(await db.columns('runs')).not.toContain('manifest');
      });
      // A second open changes nothing more.
      const before = await contents(history);
      await runHistory({ history }, ['load', ...RECORDED_NIGHTS], captureDeps(work).deps);
      expect(await contents(history)).toEqual(before);
    });

    it('brings a schema 1 database (records as compact JSON) through 2 and 3 to 4 in the same transaction', async () => {
      const history = await v2();
      await withDb(history, async (db) => {
        // The release before has no tables for the --include exports; this one adds them when it migrates.
        const relations = await db.relations();
        for (const t of EXPORT_TABLES.filter((e) => relations.has(e.table))) {
          for (const [id, text] of await db.all(`SELECT version_id, record FROM ${t.table}`)) {
            await db.run(`UPDATE ${t.table} SET record = ? WHERE version_id = ?`, [
              JSON.stringify(JSON.parse(String(text))),
              Number(id),
            ]);
          }
        }
        await db.run("UPDATE history_meta SET value = '1' WHERE name = 'schema_version'");
      });
      const out = join(work, `asof-schema1-${n}`);
      expect(
        (await runHistory({ history, outDir: out }, ['as-of', '2026-11-22'], captureDeps(work).deps)).exitCode,
      ).toBe(EXIT.ok);
      expect(await meta(history)).toEqual({ schema_version: SCHEMA_NOW, written_by: TOOL.version });
      expect(await contents(history)).toEqual(await contents(fresh));
    });

    it('leaves a database it cannot migrate as it was, and says why', async () => {
      const history = await v2();
      await withDb(history, (db) =>
        db.run(
          "UPDATE drives_versions SET record = 'not json' WHERE version_id = (SELECT MAX(version_id) FROM drives_versions)",
        ),
      );
      const before = await withDb(history, async (db) => ({
        runs: await db.all('SELECT * FROM runs ORDER BY time'),
        users: await db.all('SELECT * FROM users_versions ORDER BY version_id'),
      }));
      const err = await runHistory({ history }, ['runs'], captureDeps(work).deps).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DomainError);
      expect(exitCodeOf(err as DomainError)).toBe(EXIT.failed);
      expect((err as DomainError).message).toMatch(
        /holds a version whose record is not an export record \(drives_versions, version_id \d+\).*not upgraded to history schema 5 \(nothing was changed\)/,
      );
      expect(await meta(history)).toEqual({ schema_version: '2', written_by: '1.0.0' });
      await withDb(history, async (db) => {
        expect(await db.columns('runs')).toContain('manifest');
        expect(await db.relations()).not.toContain('run_manifests');
        expect({
          runs: await db.all('SELECT * FROM runs ORDER BY time'),
          users: await db.all('SELECT * FROM users_versions ORDER BY version_id'),
        }).toEqual(before);
      });
    });
  });
}

/** The declared type of one column: SQLite's column definition as its table was made, PostgreSQL's data type. */
async function declared(db: HistoryDb, table: string, column: string): Promise<string> {
  if (db.engine === 'postgres') {
    const [row] = await db.all(
      'SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?',
      [table, column],
    );
    return String(row?.[0]);
  }
  const [row] = await db.all("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]);
  const line = String(row?.[0])
    .split('\n')
    .find((l) => l.trim().startsWith(`"${column}" `));
  return String(line?.trim().replace(/,$/, ''));
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`history schema 3 → 4 on ${engine.name}`, () => {
    let work: string;
    let fresh: string;
    let n = 0;
    /** The committed schema 3 database (snapshot directories taken with --include vms --findings, the first with --raw), as a new target of this engine. */
    const v3 = async (): Promise<string> => {
      const name = `v3_${++n}`;
      if (engine.name === 'SQLite') {
        const path = join(work, `${name}.sqlite`);
        copyFileSync(HISTORY_V3, path);
        return path;
      }
      const url = await pg!.createDatabase(name);
      await replayHistoryFixture(HISTORY_V3, url, work);
      return url;
    };
    const withDb = async <T>(history: string, fn: (db: HistoryDb) => Promise<T>): Promise<T> => {
      const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };
    const rows = (history: string, tables: readonly string[]) =>
      withDb(history, async (db) =>
        Object.fromEntries(
          await Promise.all(
            tables.map(
              async (t) =>
                [
                  t,
                  await db.all(
                    `SELECT * FROM ${t} ORDER BY ${EXPORT_TABLES.some((e) => e.view === t) ? '1, 2, 3, 4' : '1, 2'}`,
                  ),
                ] as const,
            ),
          ),
        ),
      );
    const meta = (history: string) =>
      withDb(history, async (db) =>
        Object.fromEntries(
          (await db.all('SELECT name, value FROM history_meta')).map((r) => [String(r[0]), String(r[1])]),
        ),
      );
    const exportRelations = EXPORT_TABLES.flatMap((t) => [t.table, t.view]);

    beforeAll(async () => {
      if (engine.name === 'PostgreSQL') pg = await startPostgres();
      work = mkdtempSync(join(tmpdir(), 'svc-hist-migrate3-'));
      fresh = engine.name === 'SQLite' ? join(work, 'fresh.sqlite') : await pg!.createDatabase('fresh');
      await runHistory({ history: fresh, include: 'vms' }, ['load', ...RECORDED_NIGHTS], captureDeps(work).deps);
    });
    afterAll(() => {
      pg?.stop();
      pg = undefined;
      rmSync(work, { recursive: true, force: true });
    });

    it('types realms.isDefault as a boolean on the first open, in one transaction, leaving every other table as it was; as-of gives back the same exports', async () => {
      const history = await v3();
      expect(await meta(history)).toEqual({ schema_version: '3', written_by: '1.0.0' });
      const untouched = EXPORT_TABLES.filter((t) => t.def.name !== 'realms').map((t) => t.table);
      const runTables = ['runs', 'run_manifests', 'run_exports'];
      const before = await rows(history, [...untouched, ...runTables]);
      await withDb(history, async (db) => {
        expect(await declared(db, 'realms_versions', 'isDefault')).toMatch(/^("isDefault" TEXT|text)$/);
        // What the release before gave an analyst: text, which no WHERE reads as true.
        if (db.engine === 'sqlite') expect(await db.all('SELECT id FROM realms WHERE "isDefault"')).toEqual([]);
      });
      // A read-only command opens it first: the upgrade is not left to the next load.
      expect((await runHistory({ history }, ['runs'], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
      expect(await meta(history)).toEqual({ schema_version: SCHEMA_NOW, written_by: TOOL.version });
      await withDb(history, async (db) => {
        expect(await declared(db, 'realms_versions', 'isDefault')).toBe(
          db.engine === 'sqlite' ? '"isDefault" INTEGER CHECK ("isDefault" IN (0, 1))' : 'boolean',
        );
        expect(await db.all('SELECT id FROM realms WHERE "isDefault"')).toEqual([['libvirt']]);
        expect(await db.all('SELECT id FROM realms WHERE NOT "isDefault" ORDER BY id')).toEqual([['altvirt']]);
        // The release before kept no _findings.json: as-of of its nights writes none.
        expect(await db.all('SELECT * FROM run_files')).toEqual([]);
      });
      expect(await rows(history, [...untouched, ...runTables])).toEqual(before);
      // The same versions, typed the same, as loading the same nights now makes.
      expect(await rows(history, exportRelations)).toEqual(await rows(fresh, exportRelations));
      for (const date of ['2026-11-21', '2026-11-22']) {
        const migrated = join(work, `asof3-${n}-${date}`);
        const loaded = join(work, `asof3-fresh-${n}-${date}`);
        expect(
          (await runHistory({ history, outDir: migrated }, ['as-of', date], captureDeps(work).deps)).exitCode,
        ).toBe(EXIT.ok);
        expect(
          (await runHistory({ history: fresh, outDir: loaded }, ['as-of', date], captureDeps(work).deps)).exitCode,
        ).toBe(EXIT.ok);
        const exportsOf = (dir: string) =>
          readdirSync(dir)
            .filter((f) => !f.startsWith('_'))
            .sort();
        expect(exportsOf(migrated)).toHaveLength(18);
        expect(exportsOf(migrated)).toEqual(exportsOf(loaded));
        for (const f of exportsOf(loaded))
          expect(readFileSync(join(migrated, f)).equals(readFileSync(join(loaded, f))), f).toBe(true);
        // What the manifest listed besides the exports (_findings.json, raw/) is not there, and it says so no more.
        expect(readdirSync(migrated)).not.toContain('_findings.json');
        const report = await verifyDir(migrated, await manifestsIn(migrated), undefined, new Date());
        expect(
          report.files.filter((f) => f.state !== 'ok'),
          JSON.stringify(report.files),
        ).toEqual([]);
        expect(report.ok).toBe(true);
      }
      // A second open changes nothing more.
      const after = await rows(history, [...exportRelations, ...runTables, 'run_files', 'history_meta']);
      await runHistory({ history }, ['runs'], captureDeps(work).deps);
      expect(await rows(history, [...exportRelations, ...runTables, 'run_files', 'history_meta'])).toEqual(after);
    });

    it('leaves a schema 3 database it cannot migrate as it was, and says why', async () => {
      const history = await v3();
      await withDb(history, (db) =>
        db.run(
          "UPDATE realms_versions SET record = 'not json' WHERE version_id = (SELECT MAX(version_id) FROM realms_versions)",
        ),
      );
      const before = await rows(history, ['realms_versions', 'runs']);
      const err = await runHistory({ history }, ['runs'], captureDeps(work).deps).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DomainError);
      expect(exitCodeOf(err as DomainError)).toBe(EXIT.failed);
      expect((err as DomainError).message).toMatch(
        /holds a version whose record is not an export record \(realms_versions, version_id \d+\).*not upgraded to history schema 5 \(nothing was changed\)/,
      );
      expect(await meta(history)).toEqual({ schema_version: '3', written_by: '1.0.0' });
      await withDb(history, async (db) => {
        expect(await declared(db, 'realms_versions', 'isDefault')).toMatch(/^("isDefault" TEXT|text)$/);
        expect(await db.relations()).not.toContain('run_files');
      });
      expect(await rows(history, ['realms_versions', 'runs'])).toEqual(before);
    });
  });
}
