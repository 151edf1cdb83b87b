import { FailedError } from '../errors.js';
import { keyOfValues, matchKeys } from '../diff/match.js';
import { TOOL } from '../version.js';
import { closeVersions, quoteIdent, type HistoryDb } from './engine.js';
import { exportTable, VERSION_COLUMNS, type ExportTable } from './schema.js';
import { keyText, rowFunction, storedKeyText } from './columns.js';
import type { InputExport, SnapshotInput } from './input.js';
import { loadFindings } from './findings.js';
import { FINDINGS_FILE_NAME } from '../findings/names.js';

export type LoadStatus = 'loaded' | 'already loaded';

export interface LoadResult {
  readonly status: LoadStatus;
  /** Versions opened (records new or changed) and closed (records changed or gone). */
  readonly opened: number;
  readonly closed: number;
}

/** Test seam: called inside the transaction after each export; a throw must leave nothing of the snapshot behind. */
export type AfterExport = (exportName: string) => Promise<void> | void;

const FIRST_LOAD_SLICE = 5000;

/** The records whose text is no open version's (`fresh`), and the open versions a record's text kept (`kept`). */
function matchByText(open: readonly unknown[][], texts: readonly string[]): { kept: Uint8Array; fresh: number[] } {
  // A version is the record's exact text: a record whose text is an open version's is unchanged (most of a night's
  // records); the others are checked, then matched by key with the open versions no text matched.
  const byText = new Map<string, number | number[]>();
  for (let i = 0; i < open.length; i++) {
    const text = String(open[i]![1]);
    const had = byText.get(text);
    // Two open versions with one text: only a backend repeating a record makes them.
    if (had === undefined) byText.set(text, i);
    else if (typeof had === 'number') byText.set(text, [had, i]);
    else had.push(i);
  }
  const kept = new Uint8Array(open.length);
  const fresh: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const hit = byText.get(texts[i]!);
    const o = typeof hit === 'number' ? hit : hit?.find((x) => kept[x] === 0);
    if (o === undefined || kept[o] === 1) fresh.push(i);
    else kept[o] = 1;
  }
  return { kept, fresh };
}

async function loadExport(
  db: HistoryDb,
  t: ExportTable,
  baseUrl: string,
  time: string,
  input: InputExport,
): Promise<{ opened: number; closed: number }> {
  const key = t.def.key;
  const first =
    (await db.all(`SELECT 1 FROM ${quoteIdent(t.table)} WHERE base_url = ? AND seen_to IS NULL LIMIT 1`, [baseUrl]))
      .length === 0;
  // The file is read and checked first (its order and, on a first load, every record's layout), before anything of it is stored.
  const file = await input.rows(first);
  const { texts } = file;
  const open = first
    ? []
    : await db.all(
        `SELECT version_id, record, ${key.map(quoteIdent).join(', ')} FROM ${quoteIdent(t.table)} WHERE base_url = ? AND seen_to IS NULL ORDER BY version_id`,
        [baseUrl],
      );
  const [maxRow] = await db.all(`SELECT MAX(version_id) FROM ${quoteIdent(t.table)}`);
  let nextId = Number(maxRow?.[0] ?? 0) + 1;
  const columns = [...VERSION_COLUMNS, ...t.columns];
  const toRow = rowFunction(t.typed);
  const keyTypes = key.map((k) => t.typed.find((c) => c.name === k)!.type);
  if (first) {
    // Nothing of this site open yet (its first night, or an export new to it): every record opens a version, no matching
    // needed; stored a slice at a time, so that the rows of a large export are garbage before they grow old.
    for (let start = 0; start < texts.length; start += FIRST_LOAD_SLICE) {
      const slice: unknown[][] = [];
      for (let i = start; i < Math.min(texts.length, start + FIRST_LOAD_SLICE); i++)
        slice.push(toRow(nextId++, baseUrl, time, texts[i]!, file.record(i)));
      await db.insertRows(t.table, columns, slice);
    }
    return { opened: texts.length, closed: 0 };
  }
  const { kept, fresh } = matchByText(open, texts);
  const parsed = fresh.map((i) => file.record(i));
  file.checkTexts(fresh, parsed);
  const records = new Map(fresh.map((i, j) => [i, parsed[j]!]));
  const rest: number[] = [];
  for (let i = 0; i < open.length; i++) if (kept[i] === 0) rest.push(i);
  const rows: unknown[][] = [];
  const toClose: number[] = [];
  const insert = (i: number) => rows.push(toRow(nextId++, baseUrl, time, texts[i]!, records.get(i)!));
  // Both sides are matched on their key columns as text (src/history/columns.ts), so the stored records need not be
  // parsed: a key whose type changed (1 and "1") pairs two records whose texts then differ, which closes one version
  // and opens another, exactly as if they had not been paired.
  const matched = matchKeys(
    rest.map((o) => keyOfValues(keyTypes.map((type, k) => storedKeyText(type, open[o]![2 + k])))),
    fresh.map((i) => keyOfValues(keyTypes.map((type, k) => keyText(type, records.get(i)![key[k]!])))),
    (j, f) => {
      const o = rest[j]!;
      if (texts[fresh[f]!] === open[o]![1]) return;
      toClose.push(Number(open[o]![0]));
      insert(fresh[f]!);
    },
    (f) => insert(fresh[f]!),
  );
  for (let j = 0; j < matched.length; j++) if (matched[j] === 0) toClose.push(Number(open[rest[j]!]![0]));
  await closeVersions(db, t.table, toClose, time);
  await db.insertRows(t.table, columns, rows);
  return { opened: rows.length, closed: toClose.length };
}

/**
 * Loads one snapshot in one transaction: its run, then per export the
 * versions it opens and closes. Loading a snapshot already loaded (same base
 * URL, time and export hashes) changes nothing. Every file of the snapshot
 * is checked against its manifest before the transaction commits, each read
 * once: those the load reads as it reads them, the others (an export whose
 * hash equals the night before's, one unavailable) at the end; a file that
 * does not match rolls the snapshot back.
 */
export async function loadSnapshot(
  db: HistoryDb,
  input: SnapshotInput,
  afterExport?: AfterExport,
): Promise<LoadResult> {
  return db.transaction(async () => {
    const existing = await db.all('SELECT export, sha256 FROM run_exports WHERE base_url = ? AND time = ?', [
      input.baseUrl,
      input.time,
    ]);
    const known = await db.all('SELECT 1 FROM runs WHERE base_url = ? AND time = ?', [input.baseUrl, input.time]);
    const [newest] = await db.all('SELECT MAX(time) FROM runs WHERE base_url = ?', [input.baseUrl]);
    const newestTime = newest?.[0] == null ? null : String(newest[0]);
    // A snapshot not loaded now is checked all the same: a damaged one is said as such.
    if (known.length > 0 || (newestTime !== null && newestTime > input.time)) await input.verify();
    if (known.length > 0) {
      const hashes = new Map(existing.map((r) => [String(r[0]), String(r[1])]));
      const same =
        hashes.size === input.exports.length && input.exports.every((e) => hashes.get(e.export) === e.sha256);
      if (same) return { status: 'already loaded' as const, opened: 0, closed: 0 };
      throw new FailedError(
        `${input.dir}: a different snapshot of ${input.baseUrl} taken at ${input.time} is already loaded (its export ` +
          `hashes differ); it was not loaded`,
      );
    }
    if (newestTime !== null && newestTime > input.time) {
      throw new FailedError(
        `${input.dir} (${input.time}) is older than the newest snapshot of ${input.baseUrl} already loaded ` +
          `(${newestTime}); history is loaded in time order, so it was not loaded. ` +
          'Load older snapshots into a new database together with the newer ones (history load sorts them)',
      );
    }
    await insertRun(db, input);
    // The newest run before this one: an export with the same hash there has the same records, so its versions stay as they are.
    const previousRows =
      newestTime === null
        ? []
        : await db.all('SELECT export, sha256 FROM run_exports WHERE base_url = ? AND time = ? AND available = 1', [
            input.baseUrl,
            newestTime,
          ]);
    const previous = new Map<string, string>(previousRows.map((r) => [String(r[0]), String(r[1])]));
    let opened = 0;
    let closed = 0;
    for (const e of input.exports) {
      // An export unavailable tonight says nothing about its records: they stay as they were.
      if (!e.available || previous.get(e.export) === e.sha256) continue;
      const t = exportTable(e.export)!;
      const r = await loadExport(db, t, input.baseUrl, input.time, e);
      opened += r.opened;
      closed += r.closed;
      await afterExport?.(e.export);
    }
    await input.verify();
    return { status: 'loaded' as const, opened, closed };
  });
}

/** The run's rows: runs, its manifest, its exports' hashes, the files kept beside them and the night's findings. */
async function insertRun(db: HistoryDb, input: SnapshotInput): Promise<void> {
  await db.run(
    'INSERT INTO runs (base_url, time, date, source, complete, tool_version, signing_key) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [
      input.baseUrl,
      input.time,
      input.date,
      input.source,
      input.complete ? 1 : 0,
      TOOL.version,
      input.signingKey ?? null,
    ],
  );
  // The manifest as it was, for as-of: beside runs, so that a look at runs is a look at its columns.
  await db.run('INSERT INTO run_manifests (base_url, time, manifest) VALUES (?, ?, ?)', [
    input.baseUrl,
    input.time,
    input.manifestText,
  ]);
  await db.insertRows(
    'run_exports',
    ['base_url', 'time', 'export', 'file', 'count', 'available', 'sha256'],
    input.exports.map((e) => [input.baseUrl, input.time, e.export, e.file, e.count, e.available ? 1 : 0, e.sha256]),
  );
  // The files as-of gives back besides the exports (_findings.json), as the snapshot holds them.
  for (const f of input.kept) {
    const text = await f.text();
    await db.run('INSERT INTO run_files (base_url, time, name, sha256, content) VALUES (?, ?, ?, ?, ?)', [
      input.baseUrl,
      input.time,
      f.name,
      f.sha256,
      text,
    ]);
    // The night's findings, valid-time like the exports (src/history/findings.ts).
    if (f.name === FINDINGS_FILE_NAME) await loadFindings(db, input.baseUrl, input.time, text);
  }
}
