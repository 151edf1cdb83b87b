import { FailedError } from '../errors.js';
import { CATALOG, columnType } from '../exports/catalog.js';
import type { ExportDef } from '../exports/define.js';
import { TOOL } from '../version.js';
import type { ExportRecord } from '../exports/types.js';
import { quoteIdent, versionIdSql, type HistoryDb } from './engine.js';
import { recordTextsOf } from './texts.js';
import { columnSql, rowFunction, sqlType, utcExpression, type TypedColumn } from './columns.js';
import { FINDINGS_INDEX_SQL, findingsTableSql } from './findings.js';

/**
 * The history schema (docs/history.md). Raise SCHEMA_VERSION with any change
 * an older tool could not read or would write wrongly; a database of a newer
 * schema is refused, naming the tool version that wrote it.
 */
const SCHEMA_VERSION = 5;

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
    for await (const rows of versionBatches(db, table, 'version_id, record', 0)) {
      const texts = recordTextsOf(rows.map((r) => storedRecord(db, t, Number(r[0]), r[1], true)));
      // UPDATE … FROM (VALUES …): one statement per batch in both engines (SQLite 3.33+; the VALUES columns are column1, column2 in both).
      const values = rows.map(() => '(CAST(? AS BIGINT), ?)').join(', ');
      await db.run(
        `UPDATE ${table} SET record = v.column2 FROM (VALUES ${values}) AS v WHERE ${table}.version_id = v.column1`,
        rows.flatMap((r, i) => [Number(r[0]), texts[i]!]),
      );
    }
  }
  // Schema 3 and 4 follow in the same transaction (migrateFrom2, migrateFrom3).
}

/** The rows of a versions table in batches, by version_id from just after `after`. */
async function* versionBatches(
  db: HistoryDb,
  table: string,
  select: string,
  after: number,
): AsyncGenerator<unknown[][]> {
  for (;;) {
    const rows = await db.all(
      `SELECT ${select} FROM ${table} WHERE version_id > ? ORDER BY version_id LIMIT ${MIGRATE_BATCH}`,
      [after],
    );
    if (rows.length === 0) return;
    yield rows;
    after = Number(rows[rows.length - 1]![0]);
  }
}

/** A version's stored record, parsed; a FailedError where it is not an export record (schema 1 needs one non-empty). */
function storedRecord(
  db: HistoryDb,
  t: ExportTable,
  versionId: number,
  text: unknown,
  nonEmpty: boolean,
): ExportRecord {
  try {
    const record: unknown = JSON.parse(String(text));
    if (
      record !== null &&
      typeof record === 'object' &&
      !Array.isArray(record) &&
      (!nonEmpty || Object.keys(record).length > 0)
    )
      return record as ExportRecord;
  } catch {
    // Said below.
  }
  throw new FailedError(
    `the history database ${db.label} holds a version whose record is not an export record (${t.table}, ` +
      `version_id ${versionId}): it was changed by something other than svc-snapshot, and it was not ` +
      `upgraded to history schema ${SCHEMA_VERSION} (nothing was changed). Restore it from a backup, or load ` +
      `the snapshots into a new database`,
  );
}

/** The column of `runs` that keeps the signing key's fingerprint (docs/verify.md). */
const SIGNING_KEY_COLUMN = 'signing_key';

/** Columns every versions table has before the export's own; no catalog column may take these names. */
export const VERSION_COLUMNS: readonly string[] = ['version_id', 'base_url', 'seen_from', 'seen_to', 'record'];

export interface ExportTable {
  readonly def: ExportDef;
  /** The view of current records: the export's name as an SQL identifier. */
  readonly view: string;
  readonly table: string;
  readonly columns: readonly string[];
  /** The columns with their types, in catalog order. */
  readonly typed: readonly TypedColumn[];
}

const ident = (name: string) => name.toLowerCase().replace(/[^a-z0-9_]/g, '_');

export const EXPORT_TABLES: readonly ExportTable[] = CATALOG.map((def) => {
  const view = ident(def.name);
  // The history type the catalog declares for each column (columnType), whatever its source.
  const typed = def.columns.map((c): TypedColumn => {
    const { kind, timestamp } = columnType(def, c);
    return { name: c.name, type: kind, timestamp };
  });
  const columns = typed.map((c) => c.name);
  for (const c of typed) {
    if (VERSION_COLUMNS.includes(c.name))
      throw new Error(`export ${def.name}: column ${c.name} clashes with a history column`);
    if (c.timestamp && columns.includes(`${c.name}_utc`)) {
      throw new Error(`export ${def.name}: column ${c.name}_utc clashes with the view's UTC time of ${c.name}`);
    }
  }
  return { def, view, table: `${view}_versions`, columns, typed };
});

export function exportTable(name: string): ExportTable | undefined {
  return EXPORT_TABLES.find((t) => t.def.name === name);
}

function versionsTableSql(db: HistoryDb, t: ExportTable, name: string, extra: readonly string[]): string {
  const cols = [
    ...t.typed.map((c) => `  ${columnSql(db.engine, c)}`),
    ...extra.map((c) => `  ${quoteIdent(c)} TEXT`),
  ].join(',\n');
  return `CREATE TABLE ${quoteIdent(name)} (
  ${versionIdSql(db.engine)},
  base_url TEXT NOT NULL,
  seen_from TEXT NOT NULL,
  seen_to TEXT,
  record TEXT NOT NULL,
${cols}
)`;
}

/** The view of current records: the catalog's columns, each timestamp followed by its `<column>_utc`, then columns an older catalog had. */
function viewSql(db: HistoryDb, t: ExportTable, extra: readonly string[]): string {
  const cols = [
    ...t.typed.flatMap((c) =>
      c.timestamp
        ? [quoteIdent(c.name), `${utcExpression(db.engine, quoteIdent(c.name))} AS ${quoteIdent(`${c.name}_utc`)}`]
        : [quoteIdent(c.name)],
    ),
    ...extra.map(quoteIdent),
  ];
  return `CREATE VIEW ${quoteIdent(t.view)} AS SELECT base_url, seen_from, ${cols.join(', ')} FROM ${quoteIdent(t.table)} WHERE seen_to IS NULL`;
}

async function createExportTable(db: HistoryDb, t: ExportTable, extra: readonly string[]): Promise<void> {
  await db.exec(
    `CREATE INDEX ${quoteIdent(`${t.table}_open`)} ON ${quoteIdent(t.table)} (base_url) WHERE seen_to IS NULL`,
  );
  await db.exec(
    `CREATE INDEX ${quoteIdent(`${t.table}_key`)} ON ${quoteIdent(t.table)} (base_url, ${t.def.key.map(quoteIdent).join(', ')})`,
  );
  await db.exec(viewSql(db, t, extra));
}

/** The columns of a versions table that the catalog no longer declares (kept, as text). */
async function extraColumns(db: HistoryDb, t: ExportTable): Promise<string[]> {
  const have = await db.columns(t.table);
  return [...have].filter((c) => !VERSION_COLUMNS.includes(c) && !t.columns.includes(c)).sort();
}

/**
 * Makes a versions table anew with the columns the catalog types now, its
 * typed values taken from the records (the exact values, which stay as they
 * are), and its indexes and view; columns the catalog no longer declares
 * stay, as they were.
 */
async function rebuildTable(db: HistoryDb, t: ExportTable): Promise<void> {
  const extra = await extraColumns(db, t);
  const next = `${t.table}_next`;
  await db.exec(versionsTableSql(db, t, next, extra));
  const toRow = rowFunction(t.typed);
  const columns = [...VERSION_COLUMNS, ...t.columns, ...extra];
  const table = quoteIdent(t.table);
  const select = [...VERSION_COLUMNS, ...extra].map(quoteIdent).join(', ');
  for await (const rows of versionBatches(db, table, select, -1)) {
    await db.insertRows(
      next,
      columns,
      rows.map((r) => {
        const record = storedRecord(db, t, Number(r[0]), r[4], false);
        const row = toRow(Number(r[0]), String(r[1]), String(r[2]), String(r[4]), record);
        row[3] = r[3];
        return [...row, ...r.slice(5)];
      }),
    );
  }
  await db.exec(`DROP VIEW IF EXISTS ${quoteIdent(t.view)}`);
  await db.exec(`DROP TABLE ${table}`);
  await db.exec(`ALTER TABLE ${quoteIdent(next)} RENAME TO ${table}`);
  await createExportTable(db, t, extra);
}

/**
 * Schema 2 kept every export column as text and each run's manifest in
 * `runs`; schema 3 types the columns (src/history/columns.ts) and keeps the
 * manifests in `run_manifests`. Each versions table is made anew, in the
 * transaction that brings the database to this schema.
 */
async function migrateFrom2(db: HistoryDb, relations: Set<string>): Promise<void> {
  await db.exec(RUN_MANIFESTS_SQL);
  await db.exec('INSERT INTO run_manifests (base_url, time, manifest) SELECT base_url, time, manifest FROM runs');
  await db.exec('ALTER TABLE runs DROP COLUMN manifest');
  for (const t of EXPORT_TABLES) if (relations.has(t.table)) await rebuildTable(db, t);
}

/** Whether each column of a versions table has the type the catalog gives it now (a boolean's CHECK included, in SQLite). */
async function typedAsDeclared(db: HistoryDb, t: ExportTable): Promise<boolean> {
  if (db.engine === 'sqlite') {
    const [row] = await db.all("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [t.table]);
    const sql = String(row?.[0] ?? '');
    return t.typed.every((c) => sql.includes(columnSql(db.engine, c)));
  }
  const rows = await db.all(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
    [t.table],
  );
  const types = new Map(rows.map((r) => [String(r[0]), String(r[1]).toUpperCase()]));
  return t.typed.every((c) => types.get(c.name) === sqlType(db.engine, c));
}

/**
 * Schema 3 typed a column derived by `equals` (realms' `isDefault`) as text,
 * holding 'true' and 'false'; schema 4 types it boolean, as every other
 * boolean, and keeps the files besides the exports that as-of gives back
 * (`run_files`: `_findings.json`). A table whose columns are not typed as the
 * catalog says is made anew; the others stay as they are.
 */
async function migrateFrom3(db: HistoryDb, relations: Set<string>): Promise<void> {
  await db.exec(RUN_FILES_SQL);
  for (const t of EXPORT_TABLES)
    if (relations.has(t.table) && !(await typedAsDeclared(db, t))) await rebuildTable(db, t);
}

const RUN_MANIFESTS_SQL = `CREATE TABLE run_manifests (
  base_url TEXT NOT NULL,
  time TEXT NOT NULL,
  manifest TEXT NOT NULL,
  PRIMARY KEY (base_url, time)
)`;

/**
 * The files of a loaded snapshot besides its exports that as-of writes back
 * (`_findings.json`), as they were: evaluated at the snapshot's time by the
 * rules of the version that took it, which a later version may have changed.
 */
const RUN_FILES_SQL = `CREATE TABLE run_files (
  base_url TEXT NOT NULL,
  time TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  content TEXT NOT NULL,
  PRIMARY KEY (base_url, time, name)
)`;

const BASE_SQL = [
  `CREATE TABLE history_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE runs (
  base_url TEXT NOT NULL,
  time TEXT NOT NULL,
  date TEXT NOT NULL,
  source TEXT NOT NULL,
  complete INTEGER NOT NULL,
  tool_version TEXT NOT NULL,
  signing_key TEXT,
  PRIMARY KEY (base_url, time)
)`,
  RUN_MANIFESTS_SQL,
  RUN_FILES_SQL,
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
  const relations = await readRelations(db);
  let version: number | undefined;
  if (relations.has('history_meta')) {
    version = await readSchemaVersion(db);
  } else if (relations.size > 0 && [...relations].some((r) => !r.startsWith('sqlite_'))) {
    throw new FailedError(
      `${db.label} holds tables but no svc-snapshot history (no history_meta table); name an empty or new database with --history`,
    );
  } else if (!write) {
    return false;
  }
  // An older schema is brought to this one on its first open by this version, read-only commands included: nothing reads the old forms.
  if (!write && version === SCHEMA_VERSION) return true;
  await upgrading(db, write, () =>
    db.transaction(async () => {
      const now = await db.relations();
      let migrated = false;
      if (!now.has('history_meta')) await createBase(db);
      else migrated = await migrate(db, now);
      // A database brought to this schema gets every export's table too (an --include export's, whoever opened it), so that it
      // looks as one this version made; a read-only open of a current one changes nothing.
      if (!write && !migrated) return;
      await completeExportTables(db, now);
    }),
  );
  return true;
}

/** The database's tables and views; a FailedError where it cannot be read. */
async function readRelations(db: HistoryDb): Promise<Set<string>> {
  try {
    return await db.relations();
  } catch (err) {
    throw new FailedError(
      `the history database ${db.label} cannot be read: ${(err as Error).message}; ` +
        'give a SQLite file written by svc-snapshot, or a postgres:// URL',
      { cause: err },
    );
  }
}

/** The schema version history_meta holds; a FailedError where it is not one this version reads. */
async function readSchemaVersion(db: HistoryDb): Promise<number> {
  const rows = await db.all('SELECT name, value FROM history_meta');
  const meta = new Map(rows.map((r) => [String(r[0]), String(r[1])]));
  const version = Number(meta.get('schema_version'));
  if (!Number.isInteger(version) || version > SCHEMA_VERSION) {
    throw new FailedError(
      `the history database ${db.label} was written by svc-snapshot ` +
        `${meta.get('written_by') ?? '(unknown version)'} with history schema ${meta.get('schema_version') ?? '?'}; ` +
        `this svc-snapshot ${TOOL.version} knows schema ${SCHEMA_VERSION} and will not read or change it: upgrade ` +
        `svc-snapshot, or name another database with --history`,
    );
  }
  return version;
}

/** The tables of a new history database, at this schema. */
async function createBase(db: HistoryDb): Promise<void> {
  for (const sql of BASE_SQL) await db.exec(sql);
  await createFindingsTable(db);
  await db.run('INSERT INTO history_meta (name, value) VALUES (?, ?), (?, ?)', [
    'schema_version',
    String(SCHEMA_VERSION),
    'written_by',
    TOOL.version,
  ]);
}

/** The table of the findings of every night loaded (schema 5). */
async function createFindingsTable(db: HistoryDb): Promise<void> {
  await db.exec(findingsTableSql(db.engine));
  await db.exec(FINDINGS_INDEX_SQL);
}

/** Brings an existing history database to this schema; whether it was older. */
async function migrate(db: HistoryDb, now: Set<string>): Promise<boolean> {
  // Read again inside the transaction: another process may have upgraded it meanwhile.
  const [row] = await db.all("SELECT value FROM history_meta WHERE name = 'schema_version'");
  const current = Number(row?.[0]);
  if (current === 1) await migrateFrom1(db, now);
  // The fingerprint of the key whose signature history load --allowed-signers verified (null: not checked);
  // a schema 2 database written before it lacks it.
  if (!(await db.columns('runs')).has(SIGNING_KEY_COLUMN))
    await db.exec(`ALTER TABLE runs ADD COLUMN ${SIGNING_KEY_COLUMN} TEXT`);
  if (current < 3) await migrateFrom2(db, now);
  if (current < 4) await migrateFrom3(db, now);
  // Schema 5 keeps the findings of every night loaded from then on (src/history/findings.ts).
  if (current < 5) await createFindingsTable(db);
  const migrated = current < SCHEMA_VERSION;
  if (migrated) {
    await db.run("UPDATE history_meta SET value = ? WHERE name = 'schema_version'", [String(SCHEMA_VERSION)]);
    await db.run("UPDATE history_meta SET value = ? WHERE name = 'written_by'", [TOOL.version]);
  }
  return migrated;
}

/** Every export's table and view, made where missing and given the columns the catalog added since. */
async function completeExportTables(db: HistoryDb, now: Set<string>): Promise<void> {
  for (const t of EXPORT_TABLES) {
    if (!now.has(t.table)) {
      await db.exec(versionsTableSql(db, t, t.table, []));
      await createExportTable(db, t, []);
      continue;
    }
    const have = await db.columns(t.table);
    const missing = t.typed.filter((c) => !have.has(c.name));
    if (missing.length === 0) continue;
    for (const c of missing) await db.exec(`ALTER TABLE ${quoteIdent(t.table)} ADD COLUMN ${columnSql(db.engine, c)}`);
    await db.exec(`DROP VIEW IF EXISTS ${quoteIdent(t.view)}`);
    await db.exec(viewSql(db, t, await extraColumns(db, t)));
  }
}

/** A read-only command that finds an older schema upgrades it, and says so when it cannot write (a read-only file or role). */
async function upgrading(db: HistoryDb, write: boolean, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (write || err instanceof FailedError) throw err;
    throw new FailedError(
      `the history database ${db.label} was written by an earlier version of svc-snapshot and must be upgraded to ` +
        `history schema ${SCHEMA_VERSION} on its first open by this one, which failed: ${(err as Error).message}. ` +
        `Run this once with write access to it (nothing was changed)`,
      { cause: err },
    );
  }
}
