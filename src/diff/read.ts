/**
 * Loading one side of a diff: a snapshot directory (its manifest and the
 * export files it names), or a raw collection, built first exactly as
 * `--replay` would build it.
 */
import { lstat, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { FailedError, UsageError } from '../errors.js';
import { readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import { buildAll } from '../exports/build.js';
import type { ExportDef } from '../exports/define.js';
import type { Include } from '../includes.js';
import type { ExportRecord, NullField } from '../exports/types.js';
import type { LoadedExport, LoadedSide } from './types.js';
import { escapeControl } from '../util/escape.js';
import { describeJsonError } from '../util/json-error.js';
import { isPlainFileName, readInside, UnreadableEntryError, withFileInside } from '../util/safe-read.js';
import { ReadableManifestExportSchema, SnapshotManifestSchema as FullManifestSchema } from '../exports/manifest.js';

/** Same name as in commands/snapshot.ts; not imported from there, which will import this module. */


/** What the diff reads of `_snapshot-manifest.json` (CONTRACT section 5), from its one schema; other fields are ignored. */
const SnapshotManifestSchema = FullManifestSchema.pick({ kind: true, baseUrl: true, time: true, date: true })
  .partial({ baseUrl: true, time: true, date: true })
  .extend({
    exports: z.array(ReadableManifestExportSchema),
    nullFields: z.array(z.object({ export: z.string(), field: z.string() })),
  });

export type SnapshotManifestView = z.infer<typeof SnapshotManifestSchema>;

/** Reads and checks a snapshot manifest, or says why it cannot: missing, not JSON, or not a snapshot manifest. */
export async function readSnapshotManifest(dir: string): Promise<{ ok: true; manifest: SnapshotManifestView } | { ok: false; problem: string }> {
  let text: string;
  try {
    text = (await readInside(dir, SNAPSHOT_MANIFEST)).toString('utf8');
  } catch (err) {
    return { ok: false, problem: `has no readable ${SNAPSHOT_MANIFEST}${err instanceof UnreadableEntryError ? ` (it ${err.problem})` : ''}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `has a ${SNAPSHOT_MANIFEST} that is not valid JSON (${describeJsonError(e, text)})` };
  }
  const parsed = SnapshotManifestSchema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return { ok: false, problem: `has a ${SNAPSHOT_MANIFEST} that is not a snapshot manifest (${escapeControl(i?.path.join('.') || 'top level')}: ${i?.message ?? 'invalid'})` };
  }
  return { ok: true, manifest: parsed.data };
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function nullColumnsByExport(nullFields: readonly Pick<NullField, 'export' | 'field'>[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const n of nullFields) {
    let set = out.get(n.export);
    if (!set) out.set(n.export, (set = new Set()));
    set.add(n.field);
  }
  return out;
}

/**
 * Reads a side's export files, one after another, into one buffer: each
 * file's bytes are valid until the next is read. Reading into pages already
 * touched takes a third of the time of reading into a new buffer of the same
 * size. The buffer is made once, as large as the largest file (`reserve`),
 * not grown file by file, which left the smaller ones to the collector: the
 * report's peak on the large site is 305 MB against 330.
 */
class ExportReader {
  private buffer = Buffer.alloc(0);

  /** Makes the buffer large enough for the largest of `files` in `dir` now, so that reading them needs no other. */
  async reserve(dir: string, files: readonly string[]): Promise<void> {
    let largest = 0;
    for (const file of files) {
      // A file that cannot be looked at is said by its read.
      const size = isPlainFileName(file) ? await lstat(join(dir, file)).then((st) => (st.isFile() ? st.size : 0), () => 0) : 0;
      largest = Math.max(largest, size);
    }
    if (largest < 2 ** 31 - 1 && this.buffer.length < largest + 1) this.buffer = Buffer.allocUnsafeSlow(largest + 1);
  }

  /** A file's bytes, as the manifest names it. */
  async read(dir: string, name: string, file: string): Promise<Buffer> {
    const shown = escapeControl(file);
    if (!isPlainFileName(file)) throw new FailedError(`${SNAPSHOT_MANIFEST} in ${escapeControl(dir)} names "${shown}" as the file of ${name}, which is not a file name; the snapshot is damaged`);
    try {
      return await withFileInside(dir, file, (handle, size) => this.readAll(handle, size));
    } catch (err) {
      const why = err instanceof UnreadableEntryError ? err.problem : 'cannot be read';
      throw new FailedError(`${shown} is listed in ${SNAPSHOT_MANIFEST} but ${why}; refusing to read ${escapeControl(dir)}`);
    }
  }

  /** To the file's end, as readFile would (which also says when a file is too large for a buffer). */
  private async readAll(handle: FileHandle, size: number): Promise<Buffer> {
    if (size >= 2 ** 31 - 1) return handle.readFile();
    // One byte more than the size: the read that finds the end needs no growing.
    if (this.buffer.length < size + 1) this.buffer = Buffer.allocUnsafeSlow(size + 1);
    let length = 0;
    for (;;) {
      if (length === this.buffer.length) {
        // The file grew since its size was read.
        if (length >= 2 ** 31 - 1) return handle.readFile();
        const bigger = Buffer.allocUnsafeSlow(Math.min(2 * length, 2 ** 31 - 1));
        this.buffer.copy(bigger, 0, 0, length);
        this.buffer = bigger;
      }
      const { bytesRead } = await handle.read(this.buffer, length, this.buffer.length - length, length);
      if (bytesRead === 0) return this.buffer.subarray(0, length);
      length += bytesRead;
    }
  }
}

/** An export file's records: its bytes parsed whole, or FailedError saying how the file is damaged. */
function parseExportBytes(dir: string, file: string, bytes: Buffer): ExportRecord[] {
  const shown = escapeControl(file);
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FailedError(`${shown} in ${escapeControl(dir)} is not valid JSON (${describeJsonError(e, text)}); the snapshot is damaged`);
  }
  if (!Array.isArray(json)) throw new FailedError(`${shown} in ${escapeControl(dir)} is not a JSON array of records; the snapshot is damaged`);
  for (let i = 0; i < json.length; i++) {
    const r: unknown = json[i];
    if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new FailedError(`${shown} in ${escapeControl(dir)}: element ${i} is not a record; the snapshot is damaged`);
  }
  return json as ExportRecord[];
}

const UNLISTED: LoadedExport = { available: false, reason: 'not listed in the manifest', records: [], nullColumns: new Set() };

/**
 * A snapshot directory's side; `given` is its manifest when not yet written
 * (a snapshot's staging directory, for its report). The manifest is read
 * now, an export file only when its export is loaded; its bytes are valid
 * until the next export is loaded.
 */
export async function loadSnapshot(dir: string, wanted: readonly ExportDef[], given?: SnapshotManifestView): Promise<LoadedSide> {
  const read = given ? { ok: true as const, manifest: given } : await readSnapshotManifest(dir);
  if (!read.ok) throw new UsageError(`${dir} ${read.problem}; give a snapshot directory or a raw collection`);
  const m = read.manifest;
  const nulls = nullColumnsByExport(m.nullFields);
  const listed = new Set(wanted.filter((def) => m.exports.some((e) => e.export === def.name)).map((def) => def.name));
  const reader = new ExportReader();
  await reader.reserve(dir, m.exports.filter((e) => e.available && listed.has(e.export)).map((e) => e.file));
  return {
    info: { dir, kind: 'snapshot', baseUrl: m.baseUrl ?? null, time: m.time ?? null, date: m.date ?? null },
    listed,
    load: async (name) => {
      const entry = listed.has(name) ? m.exports.find((e) => e.export === name) : undefined;
      if (!entry) return UNLISTED;
      const nullColumns = nulls.get(name) ?? new Set<string>();
      const reason = entry.reason !== undefined ? { reason: entry.reason } : {};
      if (!entry.available) return { available: false, ...reason, records: [], nullColumns };
      const bytes = await reader.read(dir, name, entry.file);
      return { available: true, ...reason, records: [], file: { bytes, count: entry.count, parse: () => parseExportBytes(dir, entry.file, bytes) }, nullColumns };
    },
  };
}

async function loadCollection(dir: string, include: readonly Include[]): Promise<LoadedSide> {
  const collection = await readCollection(dir);
  const result = buildAll(collection, include);
  const nulls = nullColumnsByExport(result.nullFields);
  const exports = new Map<string, LoadedExport>();
  for (const e of result.exports) {
    exports.set(e.export, {
      available: e.available,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      records: e.records,
      nullColumns: nulls.get(e.export) ?? new Set(),
    });
  }
  const m = collection.manifest;
  return { info: { dir, kind: 'collection', baseUrl: m.baseUrl, time: m.time, date: m.date }, listed: new Set(exports.keys()), load: async (name) => exports.get(name) ?? UNLISTED };
}

/**
 * Loads a snapshot directory (it has `_snapshot-manifest.json`) or a raw
 * collection (it has `_collection-manifest.json`). A snapshot's `raw/` is
 * not looked at: its exports are what the snapshot published. Only the
 * export files of `wanted` are read.
 */
export async function loadSide(dir: string, wanted: readonly ExportDef[], include: readonly Include[] = []): Promise<LoadedSide> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`${dir} does not exist; give a snapshot directory or a raw collection`);
  if (!info.isDirectory()) throw new UsageError(`${dir} is not a directory; give a snapshot directory or a raw collection`);
  if (await exists(join(dir, SNAPSHOT_MANIFEST))) return loadSnapshot(dir, wanted);
  if (await exists(join(dir, COLLECTION_MANIFEST))) return loadCollection(dir, include);
  throw new UsageError(`${dir} holds neither ${SNAPSHOT_MANIFEST} nor ${COLLECTION_MANIFEST}; give a snapshot directory or a raw collection`);
}
