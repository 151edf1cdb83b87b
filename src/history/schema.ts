import { FailedError } from '../errors.js';
import { CATALOG } from '../exports/catalog.js';
import type { ExportDef } from '../exports/define.js';
import { TOOL } from '../version.js';
import type { ExportRecord } from '../exports/types.js';
import { quoteIdent, type HistoryDb } from './engine.js';
import { recordTextsOf } from './texts.js';

/**
 * The history schema (docs/history.md). Raise SCHEMA_VERSION with any change
 * an older tool could not read or would write wrongly; a database of a newer
 * schema is refused, naming the tool version that wrote it.
 */
const SCHEMA_VERSION = 2;

/** Versions rewritten per statement when a schema 1 database is brought to 2. */
const MIGRATE_BATCH = 500;

/**
 * Schema 1 kept each version's record as compact JSON; schema 2 keeps it as
 * the export file holds it (src/history/texts.ts), which is what lets a night
 * find its unchanged records by their text. Every version is rewritten, in
 * the transaction that brings the database to schema 2; the texts parse to
 * the same records, so as-of gives back the same files.
 */
async function migrateFrom1(db: HistoryDb, relations: Set<string>): Promise<void> {
  for (const t of EXPORT_TABLES) {
    if (!relations.has(t.table)) continue;
    const table = quoteIdent(t.table);
    let after = 0;
    for (;;) {
      const rows = await db.all(`SELECT version_id, record FROM ${table} WHERE version_id > ? ORDER BY version_id LIMIT ${MIGRATE_BATCH}`, [after]);
      if (rows.length === 0) break;
      const texts = recordTextsOf(
        rows.map((r) => {
          try {
            const record: unknown = JSON.parse(String(r[1]));
            if (record !== null && typeof record === 'object' && !Array.isArray(record) && Object.keys(record).length > 0) return record as ExportRecord;
          } catch {
            // Said below.
          }
          throw new FailedError(
            `the history database ${db.label} holds a version whose record is not an export record (${t.table}, version_id ${Number(r[0])}): it was changed by something other than svc-snapshot, and it was not upgraded to history schema 2 (nothing was changed). Restore it from a backup, or load the snapshots into a new database`,
          );
        }),
      );
      // UPDATE … FROM (VALUES …): one statement per batch in both engines (SQLite 3.33+; the VALUES columns are column1, column2 in both).
      const values = rows.map(() => '(CAST(? AS BIGINT), ?)').join(', ');
      await db.run(
        `UPDATE ${table} SET record = v.column2 FROM (VALUES ${values}) AS v WHERE ${table}.version_id = v.column1`,
        rows.flatMap((r, i) => [Number(r[0]), texts[i]!]),
      );
      after = Number(rows[rows.length - 1]![0]);
    }
  }
  await db.run("UPDATE history_meta SET value = ? WHERE name = 'schema_version'", [String(SCHEMA_VERSION)]);
  await db.run("UPDATE history_meta SET value = ? WHERE name = 'written_by'", [TOOL.version]);
}

/** The column of `runs` that keeps the signing key's fingerprint (CONTRACT section 13). */
const SIGNING_KEY_COLUMN = 'signing_key';

/** Columns every versions table has before the export's own; no catalog column may take these names. */
const VERSION_COLUMNS = ['version_id', 'base_url', 'seen_from', 'seen_to', 'record'] as const;

export interface ExportTable {
  readonly def: ExportDef;
  /** The view of current records: the export's name as an SQL identifier. */
  readonly view: string;
  readonly table: string;
  readonly columns: readonly string[];
}

const ident = (name: string) => name.toLowerCase().replace(/[^a-z0-9_]/g, '_');

export const EXPORT_TABLES: readonly ExportTable[] = CATALOG.map((def) => {
  const view = ident(def.name);
  const columns = def.columns.map((c) => c.name);
  for (const c of columns) {
    if ((VERSION_COLUMNS as readonly string[]).includes(c)) throw new Error(`export ${def.name}: column ${c} clashes with a history column`);
  }
  return { def, view, table: `${view}_versions`, columns };
});

export function exportTable(name: string): ExportTable | undefined {
  return EXPORT_TABLES.find((t) => t.def.name === name);
}

function versionsTableSql(db: HistoryDb, t: ExportTable): string {
  // SQLite's INTEGER PRIMARY KEY is the row id itself; PostgreSQL needs 64 bits for the same range.
  const id = db.engine === 'sqlite' ? 'version_id INTEGER PRIMARY KEY' : 'version_id BIGINT PRIMARY KEY';
  const cols = t.columns.map((c) => `  ${quoteIdent(c)} TEXT`).join(',\n');
  return `CREATE TABLE ${quoteIdent(t.table)} (
  ${id},
  base_url TEXT NOT NULL,
  seen_from TEXT NOT NULL,
  seen_to TEXT,
  record TEXT NOT NULL,
${cols}
)`;
}

function viewSql(t: ExportTable, columns: readonly string[]): string {
  return `CREATE VIEW ${quoteIdent(t.view)} AS SELECT base_url, seen_from, ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(t.table)} WHERE seen_to IS NULL`;
}

const BASE_SQL = [
  `CREATE TABLE history_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE runs (
  base_url TEXT NOT NULL,
  time TEXT NOT NULL,
  date TEXT NOT NULL,
  source TEXT NOT NULL,
  complete INTEGER NOT NULL,
  tool_version TEXT NOT NULL,
  manifest TEXT NOT NULL,
  signing_key TEXT,
  PRIMARY KEY (base_url, time)
)`,
  `CREATE TABLE run_exports (
  base_url TEXT NOT NULL,
  time TEXT NOT NULL,
  export TEXT NOT NULL,
  file TEXT NOT NULL,
  count INTEGER NOT NULL,
  available INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  PRIMARY KEY (base_url, time, export)
)`,
];

/**
 * Checks the database's schema version and, when `write` is set, creates the
 * schema or adds the columns a newer catalog declares (old columns stay: the
 * `record` column is what as-of reads, so nothing is lost either way).
 * Returns false for a database without history (read-only callers say so).
 */
export async function ensureSchema(db: HistoryDb, write: boolean): Promise<boolean> {
  let relations: Set<string>;
  try {
    relations = await db.relations();
  } catch (err) {
    throw new FailedError(`the history database ${db.label} cannot be read: ${(err as Error).message}; give a SQLite file written by svc-snapshot, or a postgres:// URL`, { cause: err });
  }
  let version: number | undefined;
  if (relations.has('history_meta')) {
    const rows = await db.all('SELECT name, value FROM history_meta');
    const meta = new Map(rows.map((r) => [String(r[0]), String(r[1])]));
    version = Number(meta.get('schema_version'));
    if (!Number.isInteger(version) || version > SCHEMA_VERSION) {
      throw new FailedError(
        `the history database ${db.label} was written by svc-snapshot ${meta.get('written_by') ?? '(unknown version)'} with history schema ${meta.get('schema_version') ?? '?'}; ` +
          `this svc-snapshot ${TOOL.version} knows schema ${SCHEMA_VERSION} and will not read or change it: upgrade svc-snapshot, or name another database with --history`,
      );
    }
  } else if (relations.size > 0 && [...relations].some((r) => !r.startsWith('sqlite_'))) {
    throw new FailedError(`${db.label} holds tables but no svc-snapshot history (no history_meta table); name an empty or new database with --history`);
  } else if (!write) {
    return false;
  }
  if (!write) return true;
  await db.transaction(async () => {
    const now = await db.relations();
    if (!now.has('history_meta')) {
      for (const sql of BASE_SQL) await db.exec(sql);
      await db.run('INSERT INTO history_meta (name, value) VALUES (?, ?), (?, ?)', ['schema_version', String(SCHEMA_VERSION), 'written_by', TOOL.version]);
    } else if (version === 1) {
      // Read-only commands read schema 1 as it is (its records parse the same); the first load brings it to 2.
      await migrateFrom1(db, now);
    }
    // The fingerprint of the key whose signature history load --allowed-signers verified (null: not checked); nullable, so older tools still read and write the table.
    if (!(await db.columns('runs')).has(SIGNING_KEY_COLUMN)) await db.exec(`ALTER TABLE runs ADD COLUMN ${SIGNING_KEY_COLUMN} TEXT`);
    for (const t of EXPORT_TABLES) {
      if (!now.has(t.table)) {
        await db.exec(versionsTableSql(db, t));
        await db.exec(`CREATE INDEX ${quoteIdent(`${t.table}_open`)} ON ${quoteIdent(t.table)} (base_url) WHERE seen_to IS NULL`);
        await db.exec(`CREATE INDEX ${quoteIdent(`${t.table}_key`)} ON ${quoteIdent(t.table)} (base_url, ${t.def.key.map(quoteIdent).join(', ')})`);
        await db.exec(viewSql(t, t.columns));
        continue;
      }
      const have = await db.columns(t.table);
      const missing = t.columns.filter((c) => !have.has(c));
      if (missing.length === 0) continue;
      for (const c of missing) await db.exec(`ALTER TABLE ${quoteIdent(t.table)} ADD COLUMN ${quoteIdent(c)} TEXT`);
      const all = [...t.columns, ...[...have].filter((c) => !(VERSION_COLUMNS as readonly string[]).includes(c) && !t.columns.includes(c))];
      await db.exec(`DROP VIEW IF EXISTS ${quoteIdent(t.view)}`);
      await db.exec(viewSql(t, all));
    }
  });
  return true;
}
