import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { FailedError, UsageError } from '../errors.js';
import { readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST, toJsonFile } from '../collect/write.js';
import { SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import { buildAll as build } from '../exports/build.js';
import { EXPORT_BATCH, exportFileName, serializeBatches } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { exportTable } from './schema.js';
import type { Include } from '../includes.js';
import { checkRegularFile, readRegularFile, shown } from './safe-read.js';
import { fileProblem, recordTextsOf, sameAsWritten, splitRecordTexts } from './texts.js';
import { ReadableManifestExportSchema, SnapshotManifestSchema, snapshotManifest } from '../exports/manifest.js';
import { FINDINGS_FILE } from '../findings/index.js';

/** What loading needs of `_snapshot-manifest.json`, from its one schema; the whole text is kept as it is. */
const ManifestSchema = SnapshotManifestSchema.pick({ kind: true, source: true, date: true, complete: true, files: true }).extend({
  baseUrl: z.string().min(1),
  // as-of rebuilds file names and ranks runs from it: the form the tool writes, nothing looser.
  time: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
  // `bytes`, where a manifest gives a file's size, is checked with its sha256.
  exports: z.array(ReadableManifestExportSchema.extend({ bytes: z.number().int().nonnegative().optional() })),
});

export interface InputExport {
  readonly export: string;
  readonly file: string;
  readonly count: number;
  readonly available: boolean;
  readonly sha256: string;
  /**
   * The records and their texts, read (again) and checked against sha256
   * when called. `whole`: check every record's layout (a first load, which
   * stores them all) rather than only those the load names.
   */
  readonly rows: (whole: boolean) => Promise<ExportRows>;
}

interface ExportRows {
  /** texts[i] is record i as the export file holds it (src/history/texts.ts). */
  readonly texts: readonly string[];
  /** Record i, parsed when asked for. */
  record(i: number): ExportRecord;
  /**
   * Throws unless texts[which[j]] is exactly what the export writer makes of
   * records[j] (record which[j], already parsed), for each j; `which` ascending.
   */
  checkTexts(which: readonly number[], records: readonly ExportRecord[]): void;
}

/** A file of the snapshot besides its exports that the history keeps for as-of (KEPT_FILES). */
interface KeptFile {
  readonly name: string;
  readonly sha256: string;
  /** Its text, read (again) and checked against sha256 when called. */
  readonly text: () => Promise<string>;
}

/**
 * The files besides the exports that as-of gives back: `_findings.json`,
 * the findings as the snapshot's own version evaluated them at its time (a
 * later version's rules may differ, so they are kept, not evaluated again).
 * The spreadsheets, the report and raw/ are not kept (docs/history.md).
 */
const KEPT_FILES: readonly string[] = [FINDINGS_FILE];

export interface SnapshotInput {
  readonly dir: string;
  readonly baseUrl: string;
  readonly time: string;
  readonly date: string;
  readonly source: 'live' | 'replay';
  readonly complete: boolean;
  readonly manifestText: string;
  readonly exports: readonly InputExport[];
  /** The files of KEPT_FILES the manifest lists, checked by `verify` with the exports. */
  readonly kept: readonly KeptFile[];
  /**
   * Checks every export file against the manifest (size and sha256, read a
   * piece at a time), also those the load will not read: the load calls it
   * before it stores anything of the snapshot (CONTRACT section 11).
   */
  readonly verify: () => Promise<void>;
  /** With --allowed-signers: the fingerprint of the key whose signature of the manifest was verified. */
  readonly signingKey?: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * The bytes serializeExport({ records }) writes, as pieces of EXPORT_BATCH
 * records (serializeBatches writes the same bytes): a large export's whole
 * indented text is never built, and it can be longer than V8's longest string.
 */
function* exportPieces(records: readonly ExportRecord[]): Generator<string> {
  function* batches() {
    for (let i = 0; i < records.length; i += EXPORT_BATCH) yield records.slice(i, i + EXPORT_BATCH);
  }
  yield* serializeBatches(batches());
}

const notLaidOut = (dir: string, file: string) =>
  new FailedError(`${shown(file)} in ${dir} is not laid out as svc-snapshot writes exports (2-space JSON, one array); it would not come back byte for byte, so the snapshot was not loaded`);

/** Why a file that is not framed as the writer frames it was refused: not JSON, not an array of records, or only laid out otherwise. */
function unframed(dir: string, file: string, text: string): FailedError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return new FailedError(`${shown(file)} in ${dir} is not valid JSON (${(e as Error).message}); the snapshot is damaged and was not loaded`);
  }
  if (!Array.isArray(json) || json.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    return new FailedError(`${shown(file)} in ${dir} is not a JSON array of records; the snapshot is damaged and was not loaded`);
  }
  return notLaidOut(dir, file);
}

/**
 * A verified export file's records, each with its text as the file holds it,
 * parsed when asked for: a night parses only the records whose text is new.
 * Before any is stored, the file is checked to come back byte for byte from
 * as-of: its records in the export order and, with `whole` (a first load,
 * which stores them all), every record laid out as the writer writes it; a
 * night checks the layout of its new texts itself (`checkTexts`).
 */
function fileRows(dir: string, file: string, data: Buffer, count: number, key: readonly string[], whole: boolean): ExportRows {
  // Bytes that are not UTF-8 would be read as U+FFFD and written back otherwise by as-of.
  if (!isUtf8(data)) throw new FailedError(`${shown(file)} in ${dir} is not UTF-8 text; the snapshot is damaged and was not loaded`);
  const text = data.toString('utf8');
  const texts = splitRecordTexts(text);
  if (!texts) throw unframed(dir, file, text);
  if (texts.length !== count) throw new FailedError(`${shown(file)} in ${dir} holds ${texts.length} records but the manifest says ${count}; the snapshot was not loaded`);
  const problem = fileProblem(data, key, whole);
  if (problem?.kind === 'layout') throw notLaidOut(dir, file);
  if (problem?.kind === 'order') {
    throw new FailedError(`${shown(file)} in ${dir} is not sorted by its key (record ${problem.record + 1} sorts before the one above it); it is not an export as svc-snapshot writes it, so the snapshot was not loaded`);
  }
  const record = (i: number): ExportRecord => {
    try {
      return JSON.parse(texts[i]!) as ExportRecord;
    } catch (e) {
      throw new FailedError(`record ${i + 1} of ${shown(file)} in ${dir} is not valid JSON (${(e as Error).message}); the snapshot is damaged and was not loaded`);
    }
  };
  return {
    texts,
    record,
    checkTexts(which, records) {
      if (!sameAsWritten(records, which.map((i) => texts[i]!), which.map((_, j) => j))) throw notLaidOut(dir, file);
    },
  };
}

async function readSnapshotDir(dir: string): Promise<SnapshotInput> {
  const manifestText = (await readRegularFile(dir, SNAPSHOT_MANIFEST)).toString('utf8');
  let parsed;
  try {
    parsed = ManifestSchema.safeParse(JSON.parse(manifestText));
  } catch (e) {
    throw new FailedError(`${SNAPSHOT_MANIFEST} in ${dir} is not valid JSON (${(e as Error).message}); the snapshot was not loaded`);
  }
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new FailedError(`${SNAPSHOT_MANIFEST} in ${dir} is not a snapshot manifest (${i?.path.join('.') || 'top level'}: ${i?.message ?? 'invalid'}); the snapshot was not loaded`);
  }
  const m = parsed.data;
  const exports: InputExport[] = [];
  const files: ExpectedFile[] = [];
  for (const e of m.exports) {
    const table = exportTable(e.export);
    if (!table) throw new FailedError(`${SNAPSHOT_MANIFEST} in ${dir} lists an export "${shown(e.export)}" that this version does not know; the snapshot was not loaded`);
    if (e.sha256 === undefined) {
      throw new FailedError(
        `${SNAPSHOT_MANIFEST} in ${dir} has no sha256 for ${e.export} (written by a version before export hashes); its files cannot be verified, so it was not loaded. ` +
          'Load its raw collection instead (svc-snapshot history load <dir>/raw), or re-create it with --replay',
      );
    }
    const expected = e.sha256;
    files.push({ file: e.file, sha256: expected, ...(e.bytes !== undefined ? { bytes: e.bytes } : {}) });
    const read = async () => {
      const data = await readRegularFile(dir, e.file);
      if (sha256(data) !== expected) throw new FailedError(`${shown(e.file)} in ${dir} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed or damaged, and the snapshot was not loaded`);
      return data;
    };
    // Checked again when its export is read for the load: a file changed since `verify` is refused there too,
    // inside the snapshot's transaction.
    exports.push({
      export: e.export,
      file: e.file,
      count: e.count,
      available: e.available,
      sha256: expected,
      rows: async (whole) => fileRows(dir, e.file, await read(), e.count, table.def.key, whole),
    });
  }
  const kept = keptFiles(dir, m.files ?? []);
  files.push(...(m.files ?? []).filter((f) => KEPT_FILES.includes(f.name)).map((f) => ({ file: f.name, sha256: f.sha256, bytes: f.bytes })));
  const verify = async () => {
    for (const f of files) await checkExportFile(dir, f);
  };
  return { dir, baseUrl: m.baseUrl, time: m.time, date: m.date, source: m.source, complete: m.complete, manifestText, exports, kept, verify };
}

/** The manifest's `files` entries of KEPT_FILES, each read as UTF-8 text (what the history stores) and checked against its sha256. */
function keptFiles(dir: string, listed: readonly { name: string; bytes: number; sha256: string }[]): KeptFile[] {
  const out: KeptFile[] = [];
  for (const f of listed) {
    if (!KEPT_FILES.includes(f.name)) continue;
    if (out.some((k) => k.name === f.name)) {
      throw new FailedError(`${SNAPSHOT_MANIFEST} in ${dir} lists ${f.name} twice in its files; it was not written so by svc-snapshot, and the snapshot was not loaded`);
    }
    out.push({
      name: f.name,
      sha256: f.sha256,
      text: async () => {
        const data = await readRegularFile(dir, f.name);
        if (sha256(data) !== f.sha256) throw new FailedError(`${shown(f.name)} in ${dir} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed or damaged, and the snapshot was not loaded`);
        // Kept as text (PostgreSQL's text holds no NUL); svc-snapshot writes it as UTF-8 JSON, which escapes control characters.
        if (!isUtf8(data) || data.includes(0)) throw new FailedError(`${shown(f.name)} in ${dir} is not UTF-8 text; it was not written so by svc-snapshot, and the snapshot was not loaded`);
        return data.toString('utf8');
      },
    });
  }
  return out;
}

interface ExpectedFile {
  readonly file: string;
  readonly sha256: string;
  readonly bytes?: number;
}

/** `file` in `dir` has the manifest's size and sha256, read a piece at a time (never whole in memory); else exit 1 naming it. */
async function checkExportFile(dir: string, f: ExpectedFile): Promise<void> {
  const { size, sha256: actual } = await checkRegularFile(dir, f.file);
  if (f.bytes !== undefined && size !== f.bytes) {
    throw new FailedError(`${shown(f.file)} in ${dir} is ${size} bytes but ${SNAPSHOT_MANIFEST} says ${f.bytes}; the file was changed or damaged, and the snapshot was not loaded`);
  }
  if (actual !== f.sha256) throw new FailedError(`${shown(f.file)} in ${dir} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed or damaged, and the snapshot was not loaded`);
}

/** The sha256 of the export file these records make, without making it as one string. */
function exportSha256(records: readonly ExportRecord[]): string {
  const hash = createHash('sha256');
  for (const piece of exportPieces(records)) hash.update(piece);
  return hash.digest('hex');
}

/** A raw collection is built first, as --replay builds it; its manifest is the one that build would publish. */
async function readCollectionDir(dir: string, include: readonly Include[]): Promise<SnapshotInput> {
  const collection = await readCollection(dir);
  const complete = collection.manifest.routes.every((r) => r.error === undefined);
  const result = build(collection, include);
  const date = collection.manifest.date;
  const written = result.exports.map((e) => {
    return { export: e.export, file: exportFileName(e.export, e.records.length, date), count: e.records.length, available: e.available, reason: e.reason, proposedRoute: e.proposedRoute, sha256: exportSha256(e.records), records: e.records };
  });
  const manifest = snapshotManifest(collection, { ...result, exports: written.map(({ records: _r, ...rest }) => rest) }, 'replay', false, complete, include);
  return {
    dir,
    baseUrl: manifest.baseUrl,
    time: manifest.time,
    date,
    source: 'replay',
    complete,
    manifestText: toJsonFile(manifest),
    kept: [],
    // The texts are the writer's own: nothing to check.
    verify: async () => {},
    exports: written.map((w) => ({ export: w.export, file: w.file, count: w.count, available: w.available, sha256: w.sha256, rows: async () => ({ texts: recordTextsOf(w.records), record: (i) => w.records[i]!, checkTexts() {} }) })),
  };
}

/** A snapshot directory (its exports as it holds them), or a raw collection (built first, with the --include groups). */
export async function readInput(dir: string, include: readonly Include[] = []): Promise<SnapshotInput> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`${dir} does not exist; give snapshot directories or raw collections`);
  if (!info.isDirectory()) throw new UsageError(`${dir} is not a directory; give snapshot directories or raw collections`);
  const has = async (name: string) => (await lstat(join(dir, name)).catch(() => undefined)) !== undefined;
  if (await has(SNAPSHOT_MANIFEST)) return readSnapshotDir(dir);
  if (await has(COLLECTION_MANIFEST)) return readCollectionDir(dir, include);
  throw new UsageError(`${dir} holds neither ${SNAPSHOT_MANIFEST} nor ${COLLECTION_MANIFEST}; give snapshot directories or raw collections`);
}

/** The base URL and time of a snapshot or collection, from its manifest alone: enough to order a load and check its site. */
export async function peekInput(dir: string): Promise<{ dir: string; baseUrl: string; time: string }> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`${dir} does not exist; give snapshot directories or raw collections`);
  if (!info.isDirectory()) throw new UsageError(`${dir} is not a directory; give snapshot directories or raw collections`);
  for (const name of [SNAPSHOT_MANIFEST, COLLECTION_MANIFEST]) {
    if ((await lstat(join(dir, name)).catch(() => undefined)) === undefined) continue;
    let json: unknown;
    try {
      json = JSON.parse((await readRegularFile(dir, name)).toString('utf8'));
    } catch (e) {
      throw new UsageError(`${name} in ${dir} cannot be read as JSON (${e instanceof Error ? e.message : String(e)}); give snapshot directories or raw collections`);
    }
    const head = z.object({ baseUrl: z.string().min(1), time: z.string().min(1) }).safeParse(json);
    if (!head.success) throw new UsageError(`${name} in ${dir} has no baseUrl and time; give snapshot directories or raw collections`);
    return { dir, baseUrl: head.data.baseUrl, time: head.data.time };
  }
  throw new UsageError(`${dir} holds neither ${SNAPSHOT_MANIFEST} nor ${COLLECTION_MANIFEST}; give snapshot directories or raw collections`);
}
