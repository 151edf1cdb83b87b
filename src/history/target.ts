import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { DEFAULT_HISTORY_FILE } from '../config/options.js';

export type HistoryTarget =
  | { readonly engine: 'sqlite'; readonly path: string; readonly label: string }
  | {
      readonly engine: 'postgres';
      readonly host: string;
      readonly port: number;
      readonly user: string;
      readonly database: string;
      readonly sslmode: 'disable' | 'verify-full';
      /** The URL without password or query: safe to print. */
      readonly label: string;
    };

/**
 * A history target: a file path (SQLite) or `postgres://user@host:port/db`.
 * A password in the URL is refused without repeating any of the URL, so a
 * mistyped secret never reaches a terminal or a cron mail.
 */
export function parseHistoryTarget(
  raw: string | boolean | undefined,
  cwd: string,
  opts: { readonly directory?: 'usage error' | 'when opened' } = {},
): HistoryTarget {
  const value = raw === undefined || raw === true ? DEFAULT_HISTORY_FILE : String(raw);
  if (value.trim() === '')
    throw new UsageError('--history needs a file path or a postgres://user@host:port/db URL, not an empty value');
  if (/^postgres(ql)?:/i.test(value)) return parsePostgres(value);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new UsageError(
      '--history takes a file path (SQLite) or a postgres://user@host:port/db URL; other URL schemes are not supported',
    );
  }
  const path = isAbsolute(value) ? value : resolve(cwd, value);
  // `--history [target]` takes the next argument, so `history load --history svc-snapshot-2026-11-23 …` names a snapshot
  // directory as the database, which SQLite would only say it cannot open. A snapshot has its night to lose: it publishes
  // first, and the open then fails (exit 1, with the same advice).
  if (opts.directory !== 'when opened' && isDirectory(path))
    throw new UsageError(`--history ${JSON.stringify(value.slice(0, 120))} ${DIRECTORY_ADVICE}`);
  return { engine: 'sqlite', path, label: path };
}

function parsePostgres(value: string): HistoryTarget {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      '--history: the postgres:// URL cannot be parsed (it is not repeated here, as it may hold a secret); write it ' +
        'as postgres://user@host:port/db',
    );
  }
  if (url.password !== '' || /^[^/]*\/\/[^/@]*:[^/@]*@/.test(value)) {
    throw new UsageError(
      '--history: the postgres:// URL carries a password; remove it from the URL and put it in PGPASSWORD or ' +
        '~/.pgpass (the URL is not repeated here)',
    );
  }
  const user = decodeURIComponent(url.username);
  if (user === '')
    throw new UsageError('--history: the postgres:// URL names no user; write it as postgres://user@host:port/db');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '' || database.includes('/')) {
    throw new UsageError('--history: the postgres:// URL names no database; write it as postgres://user@host:port/db');
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '')
    throw new UsageError('--history: the postgres:// URL names no host; write it as postgres://user@host:port/db');
  const port = url.port === '' ? 5432 : Number(url.port);
  for (const name of url.searchParams.keys()) {
    if (name !== 'sslmode')
      throw new UsageError(
        `--history: the postgres:// URL parameter "${name.slice(0, 40)}" is not supported; only sslmode is`,
      );
  }
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  const mode = url.searchParams.get('sslmode') ?? (loopback ? 'disable' : 'verify-full');
  if (!['disable', 'require', 'verify-ca', 'verify-full'].includes(mode)) {
    throw new UsageError(
      `--history: sslmode=${mode.slice(0, 20)} is not supported: use sslmode=disable (no TLS) or verify-full (TLS ` +
        `with the certificate and host name verified; require and verify-ca mean the same here, as TLS is never ` +
        `unverified)`,
    );
  }
  const sslmode = mode === 'disable' ? 'disable' : 'verify-full';
  const label = `postgres://${encodeURIComponent(user)}@${url.host}/${encodeURIComponent(database)}`;
  return { engine: 'postgres', host, port, user, database, sslmode, label };
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** What to do when --history named a directory: said by the usage error above and by the open of a snapshot's history (src/history/engine.ts). */
export const DIRECTORY_ADVICE =
  'is a directory, not a database: --history takes the argument after it as its target. ' +
  `Write --history=<file> (e.g. --history=./${DEFAULT_HISTORY_FILE}) or a postgres:// URL the same way, and list the snapshot directories as arguments`;
