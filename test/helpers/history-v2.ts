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

export const RECORDED_NIGHTS = [join(REPO_ROOT, 'recordings', 'platform-3.14.1'), join(REPO_ROOT, 'recordings', 'platform-3.14.1-night2')];

/** A copy of the fixture to migrate. */
export function copyHistoryV2(path: string): string {
  copyFileSync(HISTORY_V2, path);
  return path;
}

/**
 * The fixture as schema 2 had it on PostgreSQL: its tables, indexes and views
 * made by the statements SQLite kept of them (schema 2 wrote one SQL for both
 * engines), and its rows copied over.
 */
export async function replayHistoryV2(url: string, work: string): Promise<void> {
  const { default: Database } = await import('libsql');
  const { default: pg } = await import('pg');
  // Read from a copy: SQLite would put its -wal and -shm files beside the one in the repository.
  const source = new Database(copyHistoryV2(join(work, 'history-v2-replayed.sqlite')));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const objects = source.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid").raw(true).all() as [string, string, string][];
    await client.query('BEGIN');
    for (const [type, name, sql] of objects) {
      // INTEGER PRIMARY KEY is SQLite's row id; schema 2 made it BIGINT on PostgreSQL.
      await client.query(sql.replace('version_id INTEGER PRIMARY KEY', 'version_id BIGINT PRIMARY KEY'));
      if (type !== 'table') continue;
      const rows = source.prepare(`SELECT * FROM "${name}"`).raw(true).all() as unknown[][];
      const columns = (source.prepare(`SELECT name FROM pragma_table_info(?)`).raw(true).all(name) as [string][]).map((r) => `"${r[0]}"`);
      for (const row of rows) await client.query(`INSERT INTO "${name}" (${columns.join(', ')}) VALUES (${row.map((_, i) => `$${i + 1}`).join(', ')})`, row);
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
    source.close();
  }
}
