/**
 * Reading a published snapshot for `convert`: its manifest, and each export
 * file it names, opened only as a regular file inside the directory (never
 * through a symbolic link, never by a name with a path separator) and
 * checked against the manifest's `sha256` where the manifest carries one.
 * Errors name the file, never quote its content.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { FailedError, UsageError } from '../errors.js';
import { SNAPSHOT_MANIFEST } from '../collect/write.js';
import type { ExportRecord } from '../exports/types.js';
import { ReadableManifestExportSchema, SnapshotManifestSchema } from '../exports/manifest.js';
import { escapeControl } from '../util/escape.js';
import { arraySlices, opensArray, SliceJsonError, SliceTooLongError } from '../body/slices.js';
import { type ByteReader } from '../body/reader.js';
import { HashedRange } from '../body/hashed-range.js';
import { readInside, UnreadableEntryError, withFileInside } from '../util/safe-read.js';
import { plainRecordMaker, recordMaker } from '../exports/fast/record-maker.js';
import { FAST_PATHS, type FastPaths } from '../fast-paths.js';

/** What the spreadsheet forms read of `_snapshot-manifest.json` (CONTRACT section 5), from its one schema; other fields are ignored. */
const SheetManifestSchema = SnapshotManifestSchema.pick({
  kind: true,
  source: true,
  tool: true,
  baseUrl: true,
  time: true,
  date: true,
  nullFields: true,
  validation: true,
  drift: true,
  complete: true,
  include: true,
}).extend({ exports: z.array(ReadableManifestExportSchema) });
export type SheetManifest = z.infer<typeof SheetManifestSchema>;
export type SheetManifestExport = SheetManifest['exports'][number];

function quoted(name: string): string {
  return `"${escapeControl(name.length > 120 ? `${name.slice(0, 120)}…` : name)}"`;
}

/**
 * The bytes of `dir/name`, read as replay and diff read a snapshot's files
 * (a regular file directly inside the directory, never through a link:
 * CONTRACT section 5); anything else fails the conversion (exit 1).
 */
async function readRegularFile(dir: string, name: string): Promise<Buffer> {
  try {
    return await readInside(dir, name);
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw new FailedError(`${err.message}; the snapshot cannot be read`, { cause: err });
    throw err;
  }
}

/** Reads and checks a snapshot's manifest; a directory that is not a snapshot is a usage error. */
export async function readSheetManifest(dir: string): Promise<SheetManifest> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`${dir} does not exist; give a snapshot directory (one holding ${SNAPSHOT_MANIFEST})`);
  if (!info.isDirectory()) throw new UsageError(`${dir} is not a directory; give a snapshot directory (one holding ${SNAPSHOT_MANIFEST})`);
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(dir, SNAPSHOT_MANIFEST);
  } catch (err) {
    throw new UsageError(`${dir} has no readable ${SNAPSHOT_MANIFEST} (${(err as Error).message}); give a snapshot directory`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new UsageError(`${SNAPSHOT_MANIFEST} in ${dir} is not valid JSON; give a snapshot directory written by svc-snapshot`);
  }
  const parsed = SheetManifestSchema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new UsageError(`${SNAPSHOT_MANIFEST} in ${dir} is not a snapshot manifest (${i?.path.join('.') || 'top level'}: ${i?.message ?? 'invalid'}); give a snapshot directory written by svc-snapshot`);
  }
  return parsed.data;
}

/** A parsed element that is not a record: where, for the message. */
class NotARecord extends Error {
  constructor(readonly index: number) {
    super(`element ${index} is not a record`);
  }
}

/**
 * The file's JSON array, parsed a slice at a time (src/body/slices.ts) as
 * the slices are read from the file: neither its whole text nor its whole
 * bytes are ever held beside the records (for the largest export, its bytes
 * were as large as its records). Each element must be a record (NotARecord
 * names the first that is not); with `keep`, each is replaced by what keep
 * makes of it as its slice is parsed, so that only that outlives the slice.
 * Undefined when the file is not JSON; anything else that is JSON (not an
 * array) as it parses.
 */
function parseList(reader: ByteReader, keep: ((r: ExportRecord) => ExportRecord) | undefined): unknown {
  try {
    if (!opensArray(reader)) return JSON.parse(reader.read(0, reader.size).toString('utf8'));
    const out: unknown[] = [];
    for (const list of arraySlices(reader)) {
      for (const r of list) {
        if (!isRecord(r)) throw new NotARecord(out.length);
        out.push(keep ? keep(r) : r);
      }
    }
    return out;
  } catch (e) {
    if (e instanceof SyntaxError || e instanceof SliceJsonError || e instanceof SliceTooLongError) return undefined;
    throw e;
  }
}

function isRecord(r: unknown): r is ExportRecord {
  return r !== null && typeof r === 'object' && !Array.isArray(r);
}

/** A function reducing a record to `columns`, in order, a missing one null. */
function keepColumns(columns: readonly string[], fast: FastPaths): (r: ExportRecord) => ExportRecord {
  const make = fast.recordMaker ? recordMaker(columns) : plainRecordMaker(columns);
  const values: unknown[] = new Array(columns.length);
  return (r) => {
    for (let i = 0; i < columns.length; i++) values[i] = r[columns[i]!] ?? null;
    return make(values);
  };
}

/**
 * The records of one export file, checked: its sha256 (when the manifest
 * has one and `verify` is not false), a JSON array of objects, as many as the
 * manifest counts. A snapshot reading back the files it has just written into
 * its own staging directory (0700, its hashes computed while writing them)
 * skips the hash; `convert`, which reads a published snapshot, never does.
 * With `columns`, each record holds only those columns (keepColumns), made
 * as the file is parsed: the findings read a few columns of large exports.
 * `fast`: FAST_PATHS unless a differential test turns the record maker off.
 */
export async function readExportRecords(dir: string, entry: SheetManifestExport, opts: { verify?: boolean; columns?: readonly string[]; fast?: FastPaths } = {}): Promise<ExportRecord[]> {
  const sha256 = opts.verify !== false ? entry.sha256 : undefined;
  const keep = opts.columns ? keepColumns(opts.columns, opts.fast ?? FAST_PATHS) : undefined;
  // Kept, so that it is what is thrown, however the file's reading wraps it.
  let changedError: FailedError | undefined;
  const changed = () => (changedError = new FailedError(`${quoted(entry.file)} in ${dir} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed after the snapshot was taken`));
  let json: unknown;
  try {
    json = await withFileInside(dir, entry.file, async (handle, size) => {
      const reader = new HashedRange(handle.fd, size, sha256, changed);
      let parsed: unknown;
      try {
        parsed = parseList(reader, keep);
      } catch (err) {
        if (!(err instanceof NotARecord)) throw err;
        parsed = err;
      }
      // Nothing of the file is used before all of it is checked: a file changed while it was read is refused whole.
      reader.finish();
      return parsed;
    });
  } catch (err) {
    if (changedError) throw changedError;
    if (err instanceof UnreadableEntryError) throw new FailedError(`${err.message}; the snapshot cannot be read`, { cause: err });
    throw err;
  }
  if (json instanceof NotARecord) throw new FailedError(`${quoted(entry.file)} in ${dir}: element ${json.index} is not a record; the snapshot is damaged`);
  if (json === undefined) throw new FailedError(`${quoted(entry.file)} in ${dir} is not valid JSON; the snapshot is damaged`);
  if (!Array.isArray(json)) throw new FailedError(`${quoted(entry.file)} in ${dir} is not a JSON array of records; the snapshot is damaged`);
  if (json.length !== entry.count) {
    throw new FailedError(`${quoted(entry.file)} in ${dir} holds ${json.length} records where ${SNAPSHOT_MANIFEST} says ${entry.count}; the snapshot is damaged`);
  }
  return json as ExportRecord[];
}
