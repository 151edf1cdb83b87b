import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { FailedError } from '../errors.js';
import { DIRECTORY_ADVICE, isDirectory, type HistoryTarget } from './target.js';

/**
 * The two engines behind one small interface. SQL is written once, with `?`
 * placeholders (rewritten to `$n` for PostgreSQL), in the subset both speak.
 * Rows come back as arrays, in the order of the select list.
 */
export interface HistoryDb {
  readonly engine: 'sqlite' | 'postgres';
  readonly label: string;
  exec(sql: string): Promise<void>;
  all(sql: string, params?: readonly unknown[]): Promise<unknown[][]>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  insertRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void>;
  /** Names of the tables and views of the database (its own schema only, for PostgreSQL). */
  relations(): Promise<Set<string>>;
  columns(table: string): Promise<Set<string>>;
  /** Runs `fn` in one transaction that no other loader can interleave with; rolls back on any error. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A valid-time table's first column: SQLite's INTEGER PRIMARY KEY is the row id itself; PostgreSQL needs 64 bits for the same range. */
export const versionIdSql = (engine: HistoryDb['engine']) =>
  `version_id ${engine === 'sqlite' ? 'INTEGER' : 'BIGINT'} PRIMARY KEY`;

/** Ends the versions `ids` of a valid-time table at `time`, a batch of ids per statement. */
export async function closeVersions(db: HistoryDb, table: string, ids: readonly number[], time: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const batch = ids.slice(i, i + 500);
    await db.run(
      `UPDATE ${quoteIdent(table)} SET seen_to = ? WHERE version_id IN (${batch.map(() => '?').join(', ')})`,
      [time, ...batch],
    );
  }
}

export interface OpenOptions {
  /** Read-only commands must not create an empty database by mistake. */
  readonly mustExist: boolean;
  /** PEM certificates to trust for PostgreSQL TLS (from --ca-file). */
  readonly ca?: readonly string[];
}

export async function openHistory(target: HistoryTarget, opts: OpenOptions): Promise<HistoryDb> {
  return target.engine === 'sqlite' ? openSqlite(target.path, opts) : openPostgres(target, opts);
}

function cannotOpen(label: string, err: unknown, hint: string): FailedError {
  const why = err instanceof Error ? err.message : String(err);
  return new FailedError(`the history database ${label} cannot be opened: ${why}; ${hint}`, { cause: err });
}

/** How long a load waits for another writer to finish, and how often it tries; a statement's own busy timeout. */
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 50;
const STATEMENT_BUSY_MS = 250;

/** SQLite's own limit on the parameters of one statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const SQLITE_MAX_PARAMS = 32_766;
const SQLITE_ROWS_PER_INSERT = 50;

/** What this module uses of a libsql statement (its typings take a fixed parameter tuple). */
interface Statement {
  run(...params: readonly unknown[]): unknown;
  raw(on: boolean): { all(...params: readonly unknown[]): unknown[] };
}

/** The names a query of one column gives (relations, columns). */
const firstColumn = (rows: unknown[][]): Set<string> => new Set(rows.map((r) => String(r[0])));

type SqliteDatabase = InstanceType<typeof import('libsql')>;

async function openSqlite(path: string, opts: OpenOptions): Promise<HistoryDb> {
  if (opts.mustExist && !existsSync(path)) {
    throw new FailedError(
      `there is no history database at ${path}; load snapshots first (svc-snapshot history load <dir>... --history ${path}) or name another with --history`,
    );
  }
  if (isDirectory(path)) throw new FailedError(`the history database ${JSON.stringify(path)} ${DIRECTORY_ADVICE}`);
  if (!existsSync(dirname(path)))
    throw new FailedError(
      `the history database ${path} cannot be created: its directory ${dirname(path)} does not exist`,
    );
  const { default: Database } = await import('libsql');
  try {
    // The history holds personal data: created 0600 like the exports (SQLite gives its -wal and -shm files the same mode).
    if (!existsSync(path)) closeSync(openSync(path, 'wx', 0o600));
    // A short busy timeout per statement: waiting for another writer is done in transaction(), where a signal can still end the run.
    const db = new Database(path, { timeout: STATEMENT_BUSY_MS });
    // A file that is not SQLite only shows it on first read.
    // WAL: readers (as-of, log) are not blocked while a load writes. FULL: the log is synced at every
    // commit, so a load reported done survives a power cut too (NORMAL could lose it, and --keep may
    // already have deleted older snapshot directories); it costs one fsync per load.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // A first night inserts a few hundred thousand rows into one table and its key index:
    // 64 MB of page cache instead of 2 keeps them off the disk until commit.
    db.pragma('cache_size = -65536');
    return new SqliteHistory(path, db);
  } catch (err) {
    throw cannotOpen(path, err, 'give a writable path for a SQLite file, or a postgres:// URL');
  }
}

class SqliteHistory implements HistoryDb {
  readonly engine = 'sqlite';
  private readonly statements = new Map<string, Statement>();
  private inTransaction = false;

  constructor(
    readonly label: string,
    private readonly db: SqliteDatabase,
  ) {}

  private prepare(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql) as unknown as Statement));
    return s;
  }

  async exec(sql: string): Promise<void> {
    this.db.exec(sql);
  }

  async all(sql: string, params: readonly unknown[] = []): Promise<unknown[][]> {
    return this.prepare(sql)
      .raw(true)
      .all(...params) as unknown[][];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    this.prepare(sql).run(...params);
  }

  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
    const head = `INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) VALUES `;
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    // Several rows per statement: each call into the driver costs about as much as SQLite's own work for a row.
    const perBatch = Math.max(1, Math.min(SQLITE_ROWS_PER_INSERT, Math.floor(SQLITE_MAX_PARAMS / columns.length)));
    let start = 0;
    if (rows.length >= perBatch) {
      const many = this.prepare(head + Array<string>(perBatch).fill(tuple).join(', '));
      const values: unknown[] = new Array<unknown>(perBatch * columns.length);
      for (; start + perBatch <= rows.length; start += perBatch) {
        let k = 0;
        for (let i = start; i < start + perBatch; i++) for (const v of rows[i]!) values[k++] = v;
        many.run(values);
      }
    }
    // One array argument: the driver flattens a spread of arguments into a new array first.
    const one = this.prepare(head + tuple);
    for (; start < rows.length; start++) one.run(rows[start]!);
  }

  async relations(): Promise<Set<string>> {
    return firstColumn(await this.all("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"));
  }

  async columns(table: string): Promise<Set<string>> {
    return firstColumn(await this.all('SELECT name FROM pragma_table_info(?)', [table]));
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) throw new Error('nested history transaction');
    await this.beginImmediate();
    this.inTransaction = true;
    try {
      const result = await fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // The engine already rolled back (e.g. disk full): nothing left to undo.
      }
      throw err;
    } finally {
      this.inTransaction = false;
    }
  }

  /**
   * IMMEDIATE: a second loader waits for the lock instead of failing half-way. It waits here, between short
   * tries, rather than inside SQLite, which would hold this thread (and a SIGTERM) for the whole wait.
   */
  private async beginImmediate(): Promise<void> {
    for (const start = Date.now(); ;) {
      try {
        this.db.exec('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
        if (Date.now() - start >= LOCK_WAIT_MS) {
          throw new FailedError(
            `the history database ${this.label} is being written by another process (another history load, or snapshot --history) ` +
              `and was still locked after ${LOCK_WAIT_MS / 1000} s; nothing was loaded. Run again once that one is done`,
            { cause: err },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
      }
    }
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.db.close();
  }
}

/**
 * What to do about a failed connection. pg says only "client password must
 * be a string" when the server asks for a password and neither PGPASSWORD nor
 * a usable .pgpass gave one (pg reads .pgpass through the pgpass package
 * whenever no password is passed in, which is why none ever is here).
 */
function connectHint(err: unknown, user: string): string {
  const message = err instanceof Error ? err.message : '';
  if (/password must be a string/i.test(message)) {
    return (
      `the server asks for a password for ${user} and none was found: ` +
      'set PGPASSWORD, or put it in ~/.pgpass (mode 0600; PGPASSFILE names another file), as for psql'
    );
  }
  if (/password authentication failed/i.test(message)) {
    return `the password in PGPASSWORD or ~/.pgpass (PGPASSWORD wins when both are set) is not ${user}'s: correct it there`;
  }
  return 'check the host, port, user and database, the password in PGPASSWORD or ~/.pgpass, and sslmode/--ca-file';
}

/** `?` placeholders to `$1, $2, …`; the SQL of this module has no `?` inside literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type PostgresTarget = Extract<HistoryTarget, { engine: 'postgres' }>;

/**
 * A parameter as PostgreSQL can take it: its text cannot hold U+0000, so a
 * NUL in a typed column's text is U+FFFD there (docs/history.md); the
 * `record` column, JSON, holds it escaped and exact.
 */
function pgValue(v: unknown): unknown {
  return typeof v === 'string' && v.includes('\u0000') ? v.replaceAll('\u0000', '\ufffd') : v;
}

async function openPostgres(target: PostgresTarget, opts: OpenOptions): Promise<HistoryDb> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    user: target.user,
    database: target.database,
    // The password, if any, comes from PGPASSWORD or ~/.pgpass (pg reads both, like psql).
    ssl:
      target.sslmode === 'disable'
        ? false
        : {
            rejectUnauthorized: true,
            ...(opts.ca ? { ca: [...opts.ca] } : {}),
            // pg names the host to TLS only when it is not an IP address, and Node then checks the
            // certificate against "localhost": the host of the URL is checked instead, name or address.
            checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(target.host, cert),
          },
    connectionTimeoutMillis: 15_000,
    application_name: 'svc-snapshot',
  });
  const db = new PostgresHistory(target.label, client);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw cannotOpen(target.label, err, connectHint(err, target.user));
  }
  return db;
}

class PostgresHistory implements HistoryDb {
  readonly engine = 'postgres';
  private lost: Error | undefined;

  constructor(
    readonly label: string,
    private readonly client: import('pg').Client,
  ) {
    // A connection lost between queries is reported by the next query; without a listener it would crash the process.
    client.on('error', (err) => {
      this.lost = err;
    });
  }

  private checkConnected(): void {
    if (this.lost)
      throw new FailedError(
        `the connection to ${this.label} was lost: ${this.lost.message}; the server rolled back what was being written`,
      );
  }

  private async query(sql: string, params: readonly unknown[]) {
    this.checkConnected();
    return this.client.query({ text: numbered(sql), values: params.map(pgValue), rowMode: 'array' });
  }

  async exec(sql: string): Promise<void> {
    this.checkConnected();
    await this.client.query(sql);
  }

  async all(sql: string, params: readonly unknown[] = []): Promise<unknown[][]> {
    return (await this.query(sql, params)).rows as unknown[][];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.query(sql, params);
  }

  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
    // One statement per batch of rows: a round trip per row would dominate a first load.
    const perBatch = Math.max(1, Math.min(1000, Math.floor(60_000 / columns.length)));
    const head = `INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) VALUES `;
    for (let start = 0; start < rows.length; start += perBatch) {
      const batch = rows.slice(start, start + perBatch);
      const values: unknown[] = [];
      const tuples = batch.map((row) => {
        const first = values.length;
        for (const v of row) values.push(pgValue(v));
        return `(${row.map((_, i) => `$${first + i + 1}`).join(', ')})`;
      });
      this.checkConnected();
      await this.client.query({ text: head + tuples.join(', '), values });
    }
  }

  async relations(): Promise<Set<string>> {
    return firstColumn(
      await this.all(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ' +
          'UNION SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()',
      ),
    );
  }

  async columns(table: string): Promise<Set<string>> {
    return firstColumn(
      await this.all(
        'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
        [table],
      ),
    );
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.query('BEGIN', []);
    try {
      // One loader at a time per database: the advisory lock ends with the transaction.
      await this.query('SELECT pg_advisory_xact_lock(?)', [0x5_3_5_6_4_3]);
      const result = await fn();
      await this.query('COMMIT', []);
      return result;
    } catch (err) {
      // On a lost connection the server has rolled back already.
      await this.client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}
