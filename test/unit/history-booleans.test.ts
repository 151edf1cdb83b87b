/**
 * Every boolean column of every export, the --include ones too, is a boolean
 * in the history database (CONTRACT section 15): SQLite INTEGER 0/1 with a
 * CHECK, PostgreSQL boolean, and `WHERE "column"` reads it as such. The
 * columns are found by walking the export catalog (columnType), never
 * listed here; the catalog's answer is held against the values the exports
 * built from the recordings hold and against docs/exports.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readCollection } from '../../src/collect/replay.js';
import { runHistory } from '../../src/commands/history.js';
import { buildAll } from '../../src/exports/build.js';
import { CATALOG, columnType } from '../../src/exports/catalog.js';
import { unwrap } from '../../src/exports/schema.js';
import type { ExportRecord } from '../../src/exports/types.js';
import { EXIT } from '../../src/exit-codes.js';
import { openHistory, quoteIdent, type HistoryDb } from '../../src/history/engine.js';
import { exportTable } from '../../src/history/schema.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { RECORDED_NIGHTS } from '../helpers/history-v2.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

const NIGHTS = [...RECORDED_NIGHTS, join(REPO_ROOT, 'recordings', 'platform-3.14.1-night3')];
const SITE = 'https://platform.example.org';

/** `export.column` of every column whose schema, as the catalog declares it, is boolean. */
const BOOLEANS: readonly { readonly exp: string; readonly column: string }[] = CATALOG.flatMap((exp) =>
  exp.columns
    .filter((c) => unwrap(columnType(exp, c).schema) instanceof z.ZodBoolean)
    .map((c) => ({ exp: exp.name, column: c.name })),
);
const named = (b: { exp: string; column: string }) => `${b.exp}.${b.column}`;

/** The exports of the last night, as the history's current records hold them. */
async function lastNight(): Promise<Map<string, readonly ExportRecord[]>> {
  const built = buildAll(await readCollection(NIGHTS[NIGHTS.length - 1]!), ['vms']);
  return new Map(built.exports.map((e) => [e.export, e.records]));
}

describe('the boolean columns of the export catalog', () => {
  it('are every column that holds a boolean in the exports built from the recordings, and only such columns', async () => {
    const holding = new Set<string>();
    let values = 0;
    for (const dir of [...NIGHTS, join(REPO_ROOT, 'recordings', 'platform-3.13.8')]) {
      for (const e of buildAll(await readCollection(dir), ['vms']).exports) {
        for (const r of e.records) {
          for (const [column, v] of Object.entries(r)) {
            if (typeof v === 'boolean') holding.add(`${e.export}.${column}`);
            const declared = BOOLEANS.some((b) => b.exp === e.export && b.column === column);
            if (declared) {
              expect(v === null || typeof v === 'boolean', `${e.export}.${column} = ${JSON.stringify(v)}`).toBe(true);
              values++;
            }
          }
        }
      }
    }
    expect([...holding].filter((h) => !BOOLEANS.map(named).includes(h))).toEqual([]);
    expect(values).toBeGreaterThan(100);
    // Each export with a boolean column is among them, the --include exports' too.
    expect(new Set(BOOLEANS.map((b) => b.exp)).size).toBeGreaterThanOrEqual(8);
    expect(BOOLEANS.some((b) => CATALOG.find((e) => e.name === b.exp)!.include !== undefined)).toBe(true);
  });

  it('are the columns docs/exports.md gives the type boolean', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'exports.md'), 'utf8');
    const documented: string[] = [];
    let exp = '';
    for (const line of doc.split('\n')) {
      const heading = /^## (\S+)$/.exec(line);
      if (heading) exp = heading[1]!;
      const row = /^\| \d+ \| `([^`]+)` \| boolean \|/.exec(line);
      if (row) documented.push(`${exp}.${row[1]}`);
    }
    expect(documented.sort()).toEqual(BOOLEANS.map(named).sort());
  });
});

let pg: TestPostgres | undefined;
const ENGINES = [
  { name: 'SQLite', skip: null as string | null },
  { name: 'PostgreSQL', skip: postgresUnavailable() },
];

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`boolean columns in the history on ${engine.name}`, () => {
    let work: string;
    let history: string;
    beforeAll(async () => {
      if (engine.name === 'PostgreSQL') pg = await startPostgres();
      work = mkdtempSync(join(tmpdir(), 'svc-hist-bool-'));
      history = engine.name === 'SQLite' ? join(work, 'history.sqlite') : await pg!.createDatabase('booleans');
      expect(
        (await runHistory({ history, include: 'vms' }, ['load', ...NIGHTS], captureDeps(work).deps)).exitCode,
      ).toBe(EXIT.ok);
    });
    afterAll(() => {
      pg?.stop();
      pg = undefined;
      rmSync(work, { recursive: true, force: true });
    });

    const withDb = async <T>(fn: (db: HistoryDb) => Promise<T>): Promise<T> => {
      const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };

    it('are declared boolean, refuse anything else, and WHERE reads them as the export files hold them', async () => {
      const records = await lastNight();
      let trues = 0;
      await withDb(async (db) => {
        for (const b of BOOLEANS) {
          const t = exportTable(b.exp)!;
          const column = quoteIdent(b.column);
          if (db.engine === 'sqlite') {
            const [row] = await db.all("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [t.table]);
            expect(String(row![0]), named(b)).toContain(`${column} INTEGER CHECK (${column} IN (0, 1))`);
          } else {
            const [row] = await db.all(
              'SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?',
              [t.table, b.column],
            );
            expect(row?.[0], named(b)).toBe('boolean');
          }
          // What schema 3 stored for realms.isDefault ('true') and a number that is no boolean: refused by the column itself.
          for (const wrong of db.engine === 'sqlite' ? ['true', 2] : [2]) {
            const insert = db.run(
              `INSERT INTO ${quoteIdent(t.table)} (version_id, base_url, seen_from, record, ${column}) VALUES (?, ?, ?, ?, ?)`,
              [-1, 'https://x.invalid', '2000-01-01T00:00:00.000Z', '{}', wrong],
            );
            await expect(insert, `${named(b)} = ${JSON.stringify(wrong)}`).rejects.toThrow();
          }
          const current = records.get(b.exp) ?? [];
          const count = async (where: string) =>
            Number(
              (
                await db.all(`SELECT COUNT(*) FROM ${quoteIdent(t.view)} WHERE base_url = ? AND ${where}`, [SITE])
              )[0]![0],
            );
          expect(
            [await count(column), await count(`NOT ${column}`), await count(`${column} IS NULL`)],
            named(b),
          ).toEqual([
            current.filter((r) => r[b.column] === true).length,
            current.filter((r) => r[b.column] === false).length,
            current.filter((r) => r[b.column] === null || r[b.column] === undefined).length,
          ]);
          trues += current.filter((r) => r[b.column] === true).length;
        }
      });
      expect(trues).toBeGreaterThan(0);
    });
  });
}
