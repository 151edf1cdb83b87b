import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './run-cli.js';

/**
 * test/fixtures/history-v2.sqlite: recordings/platform-3.14.1 and
 * recordings/platform-3.14.1-night2 loaded by svc-snapshot 1.0.0 with
 * history schema 2 (every export column text, the manifest in runs), before
 * schema 3. Made once with that release:
 *
 *   node bin/svc-snapshot.js history load recordings/platform-3.14.1 recordings/platform-3.14.1-night2 --history=test/fixtures/history-v2.sqlite
 */
export const HISTORY_V2 = join(REPO_ROOT, 'test', 'fixtures', 'history-v2.sqlite');

export const RECORDED_NIGHTS = [
  join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
  join(REPO_ROOT, 'recordings', 'platform-3.14.1-night2'),
];

/**
 * test/fixtures/history-v3.sqlite: the nights of recordings/platform-3.14.1
 * and recordings/platform-3.14.1-night2 as snapshot directories taken with
 * `--include vms --findings` (the first also with `--raw`), loaded by
 * svc-snapshot 1.0.0 with history schema 3 (realms' `isDefault` as text,
 * no run_files), before schema 4. Made once with that release (commit
 * d8a727b):
 *
 *   node bin/svc-snapshot.js --replay recordings/platform-3.14.1 --include vms --findings --raw --out-dir n1
 *   node bin/svc-snapshot.js --replay recordings/platform-3.14.1-night2 --include vms --findings --out-dir n2
 *   node bin/svc-snapshot.js history load n1 n2 --history=test/fixtures/history-v3.sqlite
 */
export const HISTORY_V3 = join(REPO_ROOT, 'test', 'fixtures', 'history-v3.sqlite');

/** A copy of the fixture to migrate. */
export function copyHistoryV2(path: string): string {
  copyFileSync(HISTORY_V2, path);
  return path;
}

/**
 * A SQLite statement of the history as the same schema made it on
 * PostgreSQL (one SQL for both engines, but for the column types: see
 * src/history/columns.ts, sqlType and utcExpression).
 */
function asPostgres(sql: string): string {
  return (
    sql
      // INTEGER PRIMARY KEY is SQLite's row id; BIGINT on PostgreSQL.
      .replace('version_id INTEGER PRIMARY KEY', 'version_id BIGINT PRIMARY KEY')
      .replace(/INTEGER CHECK \(("[^"]+") IN \(0, 1\)\)/g, 'BOOLEAN')
      .replace(/^(\s+"[^"]+") INTEGER(,?)$/gm, '$1 BIGINT$2')
      .replace(/^(\s+"[^"]+") REAL(,?)$/gm, '$1 DOUBLE PRECISION$2')
      .replace(/strftime\('%Y-%m-%dT%H:%M:%fZ', ("[^"]+") \/ 1000\.0, 'unixepoch'\)/g, 'to_timestamp($1 / 1000.0)')
  );
}

/**
 * A committed SQLite fixture as its schema had it on PostgreSQL: its tables,
 * indexes and views made by the statements SQLite kept of them, typed as
 * that schema typed them there, and its rows copied over.
 */
export async function replayHistoryFixture(fixture: string, url: string, work: string): Promise<void> {
  const { default: Database } = await import('libsql');
  const { default: pg } = await import('pg');
  // Read from a copy: SQLite would put its -wal and -shm files beside the one in the repository.
  const copy = join(work, `replayed-${Date.now()}-${Math.random().toString(36).slice(2)}.sqlite`);
  copyFileSync(fixture, copy);
  const source = new Database(copy);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const objects = source
      .prepare(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid",
      )
      .raw(true)
      .all() as [string, string, string][];
    await client.query('BEGIN');
    for (const [type, name, sql] of objects) {
      await client.query(asPostgres(sql));
      if (type !== 'table') continue;
      const rows = source.prepare(`SELECT * FROM "${name}"`).raw(true).all() as unknown[][];
      const columns = (source.prepare(`SELECT name FROM pragma_table_info(?)`).raw(true).all(name) as [string][]).map(
        (r) => `"${r[0]}"`,
      );
      for (const row of rows)
        await client.query(
          `INSERT INTO "${name}" (${columns.join(', ')}) VALUES (${row.map((_, i) => `$${i + 1}`).join(', ')})`,
          row,
        );
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
    source.close();
  }
}

/** The schema 2 fixture on PostgreSQL. */
export function replayHistoryV2(url: string, work: string): Promise<void> {
  return replayHistoryFixture(HISTORY_V2, url, work);
}
