/**
 * The findings of every night loaded (docs/findings.md): the valid-time
 * table `findings_versions` (docs/history.md). The findings are those of the
 * snapshot's `_findings.json` as it was written, never evaluated again; a
 * night without one written by this version leaves them as they were, as an
 * unavailable export leaves its records.
 */
import { parseFindingsFile, type PreviousFinding, type PreviousFindings } from '../findings/lifecycle.js';
import { FINDINGS_FILE_NAME } from '../findings/names.js';
import { closeVersions, quoteIdent, versionIdSql, type HistoryDb } from './engine.js';

export const FINDINGS_TABLE = 'findings_versions';

/** The columns after the version's number, all text: ids, JSON texts and ISO 8601 times, as the exports' seen_from. */
const TEXT_COLUMNS: ReadonlyArray<readonly [name: string, nullable: boolean]> = [
  ['base_url', false],
  ['seen_from', false],
  ['seen_to', true],
  ['id', false],
  ['rule', false],
  ['severity', false],
  ['subject_export', false],
  ['subject_key', false],
  ['detail', false],
  ['display', false],
  ['user_name', true],
  ['project_name', true],
  ['waived_owner', true],
  ['waived_expires', true],
  ['waived_reason', true],
  ['first_seen', false],
];

const COLUMNS = ['version_id', ...TEXT_COLUMNS.map(([name]) => name)];

export function findingsTableSql(engine: HistoryDb['engine']): string {
  const columns = TEXT_COLUMNS.map(([name, nullable]) => `  ${name} TEXT${nullable ? '' : ' NOT NULL'}`);
  return `CREATE TABLE ${FINDINGS_TABLE} (\n  ${versionIdSql(engine)},\n${columns.join(',\n')}\n)`;
}

export const FINDINGS_INDEX_SQL = `CREATE INDEX findings_versions_open ON ${FINDINGS_TABLE} (base_url, id) WHERE seen_to IS NULL`;

interface Stored {
  readonly versionId: number;
  readonly content: string;
  readonly firstSeen: string;
}

/** A stored finding from its columns id, rule, severity, subject_export, subject_key, detail, display, in that order. */
function storedFinding(r: readonly unknown[]): PreviousFinding {
  return {
    id: String(r[0]),
    rule: String(r[1]),
    severity: String(r[2]) as PreviousFinding['severity'],
    subject: { export: String(r[3]), key: JSON.parse(String(r[4])) as string[] },
    detail: String(r[5]),
    display: JSON.parse(String(r[6])) as PreviousFinding['display'],
  };
}

/** What makes a new version: everything but the times. */
function contentOf(f: PreviousFinding): string {
  return JSON.stringify([f.rule, f.severity, f.subject, f.detail, f.display, f.waived ?? null]);
}

/** The findings of the night `time` given by its `_findings.json` text, loaded: versions opened and closed. */
export async function loadFindings(
  db: HistoryDb,
  baseUrl: string,
  time: string,
  fileText: string,
): Promise<{ opened: number; closed: number }> {
  const file = parseFindingsFile(fileText);
  if (!file) return { opened: 0, closed: 0 };
  const rows = await db.all(
    `SELECT version_id, id, rule, severity, subject_export, subject_key, detail, display, waived_owner, waived_expires, ` +
      `waived_reason, first_seen FROM ${FINDINGS_TABLE} WHERE base_url = ? AND seen_to IS NULL`,
    [baseUrl],
  );
  const open = new Map<string, Stored>();
  for (const r of rows) {
    const waived = r[8] == null ? undefined : { reason: String(r[10]), owner: String(r[8]), expires: String(r[9]) };
    const stored: PreviousFinding = { ...storedFinding(r.slice(1)), ...(waived ? { waived } : {}) };
    open.set(stored.id, { versionId: Number(r[0]), content: contentOf(stored), firstSeen: String(r[11]) });
  }
  const close: number[] = [];
  const insert: unknown[][] = [];
  let next = Number((await db.all(`SELECT MAX(version_id) FROM ${FINDINGS_TABLE}`))[0]?.[0] ?? 0) + 1;
  const seen = new Set<string>();
  for (const f of file.findings) {
    if (seen.has(f.id)) continue;
    seen.add(f.id);
    const was = open.get(f.id);
    if (was && was.content === contentOf(f)) continue;
    if (was) close.push(was.versionId);
    insert.push([
      next++,
      baseUrl,
      time,
      null,
      f.id,
      f.rule,
      f.severity,
      f.subject.export,
      JSON.stringify(f.subject.key),
      f.detail,
      JSON.stringify(f.display),
      f.display.user ?? null,
      f.display.project ?? null,
      f.waived?.owner ?? null,
      f.waived?.expires ?? null,
      f.waived?.reason ?? null,
      was?.firstSeen ?? time,
    ]);
  }
  for (const [id, was] of open) if (!seen.has(id)) close.push(was.versionId);
  await closeVersions(db, FINDINGS_TABLE, close, time);
  if (insert.length > 0) await db.insertRows(FINDINGS_TABLE, COLUMNS, insert);
  return { opened: insert.length, closed: close.length };
}

/**
 * The findings of the newest run of `baseUrl` before `time`, as the lifecycle
 * takes a previous night: each with its first_seen; undefined when no run
 * before it is loaded, or that run's findings are not known.
 */
export async function findingsBefore(
  db: HistoryDb,
  baseUrl: string,
  time: string,
): Promise<PreviousFindings | undefined> {
  const [newest] = await db.all('SELECT MAX(time) FROM runs WHERE base_url = ? AND time < ?', [baseUrl, time]);
  const night = newest?.[0] == null ? undefined : String(newest[0]);
  if (night === undefined) return undefined;
  const known = await db.all('SELECT 1 FROM run_files WHERE base_url = ? AND time = ? AND name = ?', [
    baseUrl,
    night,
    FINDINGS_FILE_NAME,
  ]);
  if (known.length === 0) return undefined;
  const rows = await db.all(
    `SELECT id, rule, severity, subject_export, subject_key, detail, display, first_seen FROM ${quoteIdent(FINDINGS_TABLE)} ` +
      'WHERE base_url = ? AND seen_from <= ? AND (seen_to IS NULL OR seen_to > ?) ORDER BY version_id',
    [baseUrl, night, night],
  );
  return {
    night: { time: night, source: 'history' },
    findings: rows.map((r) => ({ ...storedFinding(r), firstSeen: String(r[7]) })),
  };
}
