/**
 * The previous night of a snapshot or a report, taken from a history database
 * (src/history/findings.ts keeps the findings of every night loaded).
 */
import { existsSync } from 'node:fs';
import type { PreviousFindings } from '../findings/lifecycle.js';
import { openHistory } from './engine.js';
import { FINDINGS_TABLE, findingsBefore } from './findings.js';
import { normaliseSite } from '../config/url.js';
import type { HistoryTarget } from './target.js';

/** `--history` and its `--ca-file`: the database a report's trends and a night's previous findings are read from. */
export interface HistorySource {
  readonly target: HistoryTarget;
  readonly ca?: readonly string[];
}

/**
 * The previous night from a history database (`--history` on a snapshot or
 * a report, when no older snapshot is beside it): the findings of the newest
 * earlier run of the site. A database that does not exist yet (a first
 * night) gives none; one that cannot be read is warned about and left out,
 * since the states must not fail a night.
 */
export async function previousFromHistory(
  source: HistorySource,
  baseUrl: string,
  time: string,
  warn: (message: string) => void,
): Promise<PreviousFindings | undefined> {
  return fromExisting(
    source,
    async (db) =>
      (await db.relations()).has(FINDINGS_TABLE) ? findingsBefore(db, normaliseSite(baseUrl), time) : undefined,
    (e) =>
      warn(
        `the findings of the previous night could not be read from the history database ${source.target.label}, so ` +
          `every finding is told without a state: ${e.message}`,
      ),
  );
}

/** The newest night of the site in a history database taken after `time` (a re-run's newer night), if any; unreadable: none, warned. */
export async function newerNightInHistory(
  source: HistorySource,
  baseUrl: string,
  time: string,
  warn: (message: string) => void,
): Promise<string | undefined> {
  return fromExisting(
    source,
    async (db) => {
      const [newest] = await db.all('SELECT MAX(time) FROM runs WHERE base_url = ? AND time > ?', [
        normaliseSite(baseUrl),
        time,
      ]);
      return newest?.[0] == null ? undefined : String(newest[0]);
    },
    (e) =>
      warn(`the history database ${source.target.label} could not tell whether a newer night exists: ${e.message}`),
  );
}

/**
 * What `read` takes from the history database, if there is one: a database
 * that does not exist yet (a first night) gives nothing, and one that cannot
 * be read is said by `failed` and gives nothing, since it must not fail a night.
 */
async function fromExisting<T>(
  source: HistorySource,
  read: (db: Awaited<ReturnType<typeof openHistory>>) => Promise<T | undefined>,
  failed: (e: Error) => void,
): Promise<T | undefined> {
  if (source.target.engine === 'sqlite' && !existsSync(source.target.path)) return undefined;
  try {
    const db = await openHistory(source.target, { mustExist: true, ...(source.ca ? { ca: source.ca } : {}) });
    try {
      return await read(db);
    } finally {
      await db.close();
    }
  } catch (e) {
    failed(e as Error);
    return undefined;
  }
}
