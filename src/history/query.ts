import { FailedError, UsageError } from '../errors.js';
import { normaliseSite } from '../config/url.js';
import { sortRecords } from '../exports/order.js';
import { serializeExport } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { quoteIdent, type HistoryDb } from './engine.js';
import { EXPORT_TABLES, exportTable } from './schema.js';
import { keyParameter } from './columns.js';
import { isPlainFileName, sha256Hex } from '../util/safe-read.js';
import type { HistoryLogSummary, HistoryRunsSummary } from '../summaries/schemas.js';

/** The site a command is about: `--site`, or the only one in the database (a usage error naming them otherwise). */
export async function chooseSite(db: HistoryDb, flag: string | undefined): Promise<string | null> {
  const sites = (await db.all('SELECT DISTINCT base_url FROM runs ORDER BY base_url')).map((r) => String(r[0]));
  if (flag !== undefined) {
    const wanted = normaliseSite(flag);
    if (sites.includes(wanted)) return wanted;
    throw new UsageError(
      `--site ${JSON.stringify(wanted).slice(1, -1)} has no snapshots in ${db.label}; it holds ` +
        `${sites.length ? sites.join(', ') : 'no snapshots yet'}`,
    );
  }
  if (sites.length > 1)
    throw new UsageError(`${db.label} holds several sites; choose one with --site: ${sites.join(', ')}`);
  return sites[0] ?? null;
}

type RunRow = HistoryRunsSummary['runs'][number];

export async function listRuns(db: HistoryDb, site: string): Promise<RunRow[]> {
  const runs = await db.all(
    'SELECT base_url, time, date, source, signing_key FROM runs WHERE base_url = ? ORDER BY time',
    [site],
  );
  const counts = await db.all('SELECT time, export, count FROM run_exports WHERE base_url = ? ORDER BY time', [site]);
  const byTime = new Map<string, Record<string, number>>();
  for (const [time, exp, count] of counts) {
    const key = String(time);
    let c = byTime.get(key);
    if (!c) byTime.set(key, (c = {}));
    c[String(exp)] = Number(count);
  }
  return runs.map(([baseUrl, time, date, source, signingKey]) => ({
    baseUrl: String(baseUrl),
    time: String(time),
    date: String(date),
    source: String(source) === 'replay' ? 'replay' : 'live',
    counts: byTime.get(String(time)) ?? {},
    key: signingKey == null ? null : String(signingKey),
  }));
}

type Version = HistoryLogSummary['versions'][number];

function changedColumns(a: ExportRecord, b: ExportRecord): string[] {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return names.filter(
    (c) => JSON.stringify(a[c] ?? null) !== JSON.stringify(b[c] ?? null) || Object.hasOwn(a, c) !== Object.hasOwn(b, c),
  );
}

/** Every version of one record, oldest first; `changed` names the columns that differ from the version before (none for the first). */
export async function recordLog(
  db: HistoryDb,
  site: string,
  exportName: string,
  key: readonly string[],
): Promise<{ key: Record<string, string>; versions: Version[] }> {
  const t = exportTable(exportName);
  if (!t)
    throw new UsageError(
      `there is no export "${exportName.slice(0, 60)}"; the exports are ${EXPORT_TABLES.map((x) => x.def.name).join(', ')}`,
    );
  if (key.length !== t.def.key.length) {
    throw new UsageError(
      `${t.def.name} is keyed by ${t.def.key.join(', ')}: give ${t.def.key.length} ` +
        `value${t.def.key.length > 1 ? 's' : ''} after the export name, in that order`,
    );
  }
  const where = t.def.key.map((k) => `${quoteIdent(k)} = ?`).join(' AND ');
  // Each value as its column's type reads it; one that no value of the type reads so matches no version.
  const params = t.def.key.map((k, i) => keyParameter(t.typed.find((c) => c.name === k)!.type, key[i]!));
  const rows = params.includes(undefined)
    ? []
    : await db.all(
        `SELECT seen_from, seen_to, record FROM ${quoteIdent(t.table)} WHERE base_url = ? AND ${where} ORDER BY seen_from, version_id`,
        [site, ...params],
      );
  const versions: Version[] = [];
  for (const [from, to, text] of rows) {
    const record = JSON.parse(String(text)) as ExportRecord;
    const prev = versions[versions.length - 1];
    versions.push({
      from: String(from),
      to: to == null ? null : String(to),
      record,
      changed: prev ? changedColumns(prev.record, record) : [],
    });
  }
  return { key: Object.fromEntries(t.def.key.map((k, i) => [k, key[i]!])), versions };
}

export interface AsOfFile {
  readonly name: string;
  readonly content: string;
}

/** The run that stood after `date`: the last snapshot of that day or, failing one, the last before it. */
export async function runAsOf(
  db: HistoryDb,
  site: string,
  date: string,
): Promise<{ time: string; date: string; manifestText: string }> {
  const [row] = await db.all(
    'SELECT r.time, r.date, m.manifest FROM runs r JOIN run_manifests m ON m.base_url = r.base_url AND m.time = ' +
      'r.time WHERE r.base_url = ? AND r.date <= ? ORDER BY r.time DESC LIMIT 1',
    [site, date],
  );
  if (!row) {
    const [first] = await db.all('SELECT MIN(date) FROM runs WHERE base_url = ?', [site]);
    throw new UsageError(
      `${db.label} holds no snapshot of ${site} on or before ${date}${first?.[0] != null ? `; the first is of ${String(first[0])}` : ''}`,
    );
  }
  return { time: String(row[0]), date: String(row[1]), manifestText: String(row[2]) };
}

/**
 * The export files of one run, rebuilt from the versions that were open at
 * its time, sorted and serialized as the snapshot wrote them, and checked
 * against the hashes recorded when it was loaded.
 */
export async function exportsAsOf(db: HistoryDb, site: string, time: string): Promise<AsOfFile[]> {
  const listed = await db.all(
    'SELECT export, file, count, available, sha256 FROM run_exports WHERE base_url = ? AND time = ?',
    [site, time],
  );
  const files: AsOfFile[] = [];
  for (const t of EXPORT_TABLES) {
    const entry = listed.find((r) => String(r[0]) === t.def.name);
    if (!entry) continue;
    const [, name, count, available, sha] = entry;
    const file = plainName(db, name, t.def.name);
    let records: ExportRecord[] = [];
    if (Number(available) === 1) {
      const rows = await db.all(
        `SELECT record FROM ${quoteIdent(t.table)} WHERE base_url = ? AND seen_from <= ? AND (seen_to IS NULL OR seen_to > ?)`,
        [site, time, time],
      );
      records = rows.map((r) => JSON.parse(String(r[0])) as ExportRecord);
      sortRecords(records, t.def.key, records[0] ? Object.keys(records[0]) : []);
    }
    const content = serializeExport({ records });
    if (records.length !== Number(count) || sha256Hex(content) !== String(sha)) {
      throw new FailedError(
        `${t.def.name} as of ${time} does not come back as the file that was loaded (${file}); ` +
          `the history database ${db.label} was changed by something other than svc-snapshot`,
      );
    }
    files.push({ name: file, content });
  }
  return files;
}

/**
 * The files besides the exports kept for one run (`_findings.json`), as they
 * were loaded, checked against the sha256 recorded with them.
 */
export async function keptFilesAsOf(db: HistoryDb, site: string, time: string): Promise<AsOfFile[]> {
  const rows = await db.all(
    'SELECT name, sha256, content FROM run_files WHERE base_url = ? AND time = ? ORDER BY name',
    [site, time],
  );
  return rows.map(([stored, sha, content]) => {
    const name = plainName(db, stored, `the snapshot of ${time}`);
    if (sha256Hex(String(content)) !== String(sha)) {
      throw new FailedError(
        `${name} as of ${time} does not come back as the file that was loaded; ` +
          `the history database ${db.label} was changed by something other than svc-snapshot`,
      );
    }
    return { name, content: String(content) };
  });
}

/** A file name the database gives as one of `of`'s; a FailedError where it is not a plain file name. */
function plainName(db: HistoryDb, name: unknown, of: string): string {
  if (isPlainFileName(String(name))) return String(name);
  throw new FailedError(`${db.label} names "${String(name).slice(0, 80)}" as a file of ${of}; the database is damaged`);
}
