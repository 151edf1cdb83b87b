import { createHash } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { FailedError, UsageError } from '../errors.js';
import { readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST, SNAPSHOT_MANIFEST, toJsonFile } from '../collect/write.js';
import { buildAll as build } from '../exports/build.js';
import { compareValues } from '../exports/order.js';
import { EXPORT_BATCH, exportFileName, serializeBatches } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { exportTable } from './schema.js';
import { readRegularFile, shown } from './safe-read.js';
import { recordTextsOf, sameAsWritten, splitRecordTexts } from './texts.js';
import { ReadableManifestExportSchema, SnapshotManifestSchema, snapshotManifest } from '../exports/manifest.js';

/** What loading needs of `_snapshot-manifest.json`, from its one schema; the whole text is kept as it is. */
const ManifestSchema = SnapshotManifestSchema.pick({ kind: true, source: true, date: true, complete: true }).extend({
  baseUrl: z.string().min(1),
  // as-of rebuilds file names and ranks runs from it: the form the tool writes, nothing looser.
  time: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
  exports: z.array(ReadableManifestExportSchema),
});

export interface InputExport {
  readonly export: string;
  readonly file: string;
  readonly count: number;
  readonly available: boolean;
  readonly sha256: string;
  /** The records and their texts, read (again) and checked against sha256 when called. */
  readonly rows: () => Promise<ExportRows>;
}

export interface ExportRows {
  readonly records: readonly ExportRecord[];
  /** texts[i] is records[i] as the export file holds it (src/history/texts.ts). */
  readonly texts: readonly string[];
  /**
   * Throws unless texts[i] is exactly what the export writer makes of
   * records[i], for each i of `which` (ascending) or all: a file laid out
   * otherwise would not come back byte for byte from as-of.
   */
  checkTexts(which: readonly number[] | 'all'): void;
}

export interface SnapshotInput {
  readonly dir: string;
  readonly baseUrl: string;
  readonly time: string;
  readonly date: string;
  readonly source: 'live' | 'replay';
  readonly complete: boolean;
  readonly manifestText: string;
  readonly exports: readonly InputExport[];
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

/**
 * as-of writes an export back by sorting and serializing its records; a file
 * whose records this would put in another order is refused at load rather
 * than found out at as-of.
 */
function checkSorted(dir: string, file: string, records: readonly ExportRecord[], key: readonly string[]): void {
  const columns = records[0] ? Object.keys(records[0]) : [];
  for (let i = 1; i < records.length; i++) {
    const a = records[i - 1]!;
    const b = records[i]!;
    let c = 0;
    for (const k of key) if ((c = compareValues(a[k], b[k])) !== 0) break;
    if (c === 0) for (const k of columns) if ((c = compareValues(a[k], b[k])) !== 0) break;
    if (c > 0) throw new FailedError(`${shown(file)} in ${dir} is not sorted by its key (record ${i}); it is not an export as svc-snapshot writes it, so the snapshot was not loaded`);
  }
}

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
 * The records of a verified export file, each with its text as the file
 * holds it. Every record is parsed (the order check needs its values); the
 * check that a text is exactly what the writer makes of its record is left
 * to `checkTexts`, which the load calls for the texts it does not already
 * hold: a text already in the database was checked when it was loaded.
 */
function fileRows(dir: string, file: string, text: string, count: number, key: readonly string[]): ExportRows {
  const texts = splitRecordTexts(text);
  if (!texts) throw unframed(dir, file, text);
  if (texts.length !== count) throw new FailedError(`${shown(file)} in ${dir} holds ${texts.length} records but the manifest says ${count}; the snapshot was not loaded`);
  const records = new Array<ExportRecord>(texts.length);
  for (let i = 0; i < texts.length; i++) {
    try {
      records[i] = JSON.parse(texts[i]!) as ExportRecord;
    } catch (e) {
      throw new FailedError(`record ${i + 1} of ${shown(file)} in ${dir} is not valid JSON (${(e as Error).message}); the snapshot is damaged and was not loaded`);
    }
  }
  checkSorted(dir, file, records, key);
  return {
    records,
    texts,
    checkTexts(which) {
      if (!sameAsWritten(records, texts, which === 'all' ? texts.map((_, i) => i) : which)) throw notLaidOut(dir, file);
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
    const read = async () => {
      const data = await readRegularFile(dir, e.file);
      if (sha256(data) !== expected) throw new FailedError(`${shown(e.file)} in ${dir} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed or damaged, and the snapshot was not loaded`);
      return data.toString('utf8');
    };
    // Each file is verified when its export is loaded, inside the snapshot's
    // transaction: a file that fails rolls the whole snapshot back, and no
    // file is read twice.
    exports.push({
      export: e.export,
      file: e.file,
      count: e.count,
      available: e.available,
      sha256: expected,
      rows: async () => fileRows(dir, e.file, await read(), e.count, table.def.key),
    });
  }
  return { dir, baseUrl: m.baseUrl, time: m.time, date: m.date, source: m.source, complete: m.complete, manifestText, exports };
}

/** The sha256 of the export file these records make, without making it as one string. */
function exportSha256(records: readonly ExportRecord[]): string {
  const hash = createHash('sha256');
  for (const piece of exportPieces(records)) hash.update(piece);
  return hash.digest('hex');
}

/** A raw collection is built first, as --replay builds it; its manifest is the one that build would publish. */
async function readCollectionDir(dir: string): Promise<SnapshotInput> {
  const collection = await readCollection(dir);
  const complete = collection.manifest.routes.every((r) => r.error === undefined);
  const result = build(collection);
  const date = collection.manifest.date;
  const written = result.exports.map((e) => {
    return { export: e.export, file: exportFileName(e.export, e.records.length, date), count: e.records.length, available: e.available, reason: e.reason, proposedRoute: e.proposedRoute, sha256: exportSha256(e.records), records: e.records };
  });
  const manifest = snapshotManifest(collection, { ...result, exports: written.map(({ records: _r, ...rest }) => rest) }, 'replay', false, complete);
  return {
    dir,
    baseUrl: manifest.baseUrl,
    time: manifest.time,
    date,
    source: 'replay',
    complete,
    manifestText: toJsonFile(manifest),
    // The texts are the writer's own: nothing to check.
    exports: written.map((w) => ({ export: w.export, file: w.file, count: w.count, available: w.available, sha256: w.sha256, rows: async () => ({ records: w.records, texts: recordTextsOf(w.records), checkTexts() {} }) })),
  };
}

/** A snapshot directory, or a raw collection (built first). */
export async function readInput(dir: string): Promise<SnapshotInput> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`${dir} does not exist; give snapshot directories or raw collections`);
  if (!info.isDirectory()) throw new UsageError(`${dir} is not a directory; give snapshot directories or raw collections`);
  const has = async (name: string) => (await lstat(join(dir, name)).catch(() => undefined)) !== undefined;
  if (await has(SNAPSHOT_MANIFEST)) return readSnapshotDir(dir);
  if (await has(COLLECTION_MANIFEST)) return readCollectionDir(dir);
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
