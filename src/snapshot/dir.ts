/**
 * The one owner of a snapshot directory (restic's repository layer: one
 * layer owns integrity). Opening one parses `_snapshot-manifest.json` once
 * against its one schema; every file handed out is opened only as a regular
 * file directly inside the directory (never through a link, never by a name
 * with a path separator) and checked against the manifest's size and sha256
 * as it is read. Errors name the file, never quote its content.
 */
import { createHash } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedError, UsageError } from '../errors.js';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import type { ExportRecord } from '../exports/types.js';
import { escapeControl } from '../util/escape.js';
import { arraySlices, opensArray, SliceJsonError, SliceTooLongError } from '../body/slices.js';
import { bufferReader, type ByteReader } from '../body/reader.js';
import { isRecord } from '../body/decode.js';
import { HashedRange } from '../body/hashed-range.js';
import {
  hashedPieces,
  hashFile,
  isPlainFileName,
  readManifestJson,
  UnreadableEntryError,
  withFileInside,
} from '../util/safe-read.js';
import { recordMaker } from '../exports/fast/record-maker.js';
import { SIGNATURE_SUFFIX } from '../sign/manifest-signature.js';
import { laterFiles, MANIFEST_OF, ReadableManifestSchema, type ReadableManifest } from '../manifests.js';

export const SNAPSHOT_MANIFEST = MANIFEST_OF.snapshot;
export type ManifestEntry = ReadableManifest['exports'][number];

/** A directory that cannot be opened as a snapshot: `problem` says why (never quoting the manifest), `hint` what to do. */
class NotASnapshotError extends UsageError {
  constructor(
    readonly dir: string,
    readonly problem: string,
    hint: string,
  ) {
    super(`${dir} ${problem}; ${hint}`);
  }
}

/** A manifest that names one export or one file twice (exit 1): `problem` says which, as NotASnapshotError's does. */
class DamagedManifestError extends FailedError {
  constructor(
    readonly dir: string,
    readonly problem: string,
  ) {
    super(
      `${escapeControl(dir)} ${problem}; the snapshot is damaged: take it again, or rebuild it from its raw ` +
        'collection (--replay <dir>/raw)',
    );
  }
}

/** A file name from a manifest, as it may be printed: control characters escaped, cut to a sane length. */
export function shown(name: string): string {
  return escapeControl(name.length > 120 ? `${name.slice(0, 120)}…` : name);
}

/**
 * The snapshot `dir` whose manifest is `read` (readManifestJson's answer; verify
 * of an archive reads it out of the stream), or why it is none: `damaged` for
 * a manifest that lists an export or a file twice.
 */
export function snapshotOfManifest(
  dir: string,
  read: Awaited<ReturnType<typeof readManifestJson>>,
): Snapshot | { readonly problem: string; readonly damaged: boolean } {
  const not = (problem: string) => ({ problem, damaged: false });
  if ('unreadable' in read) return not(`has no readable ${SNAPSHOT_MANIFEST} (it ${read.unreadable})`);
  if ('invalid' in read) return not(`has a ${SNAPSHOT_MANIFEST} that is not valid JSON (${read.invalid})`);
  const parsed = ReadableManifestSchema.safeParse(read.json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return not(
      `has a ${SNAPSHOT_MANIFEST} that is not a snapshot manifest (${escapeControl(i?.path.join('.') || 'top level')}: ${i?.message ?? 'invalid'})`,
    );
  }
  const twice = listedTwice(parsed.data);
  return twice !== undefined ? { problem: twice, damaged: true } : new Snapshot(dir, parsed.data, read.bytes);
}

/**
 * What makes a manifest name two things as one: an export listed twice, or a
 * file named twice (by two exports, or by an export and `files`). Every
 * reader keys exports and files by name, so such a manifest is refused
 * before any of them reads it.
 */
function listedTwice(m: ReadableManifest): string | undefined {
  const exports = new Set<string>();
  for (const e of m.exports) {
    if (exports.has(e.export)) return `has a ${SNAPSHOT_MANIFEST} that lists export ${shown(e.export)} twice`;
    exports.add(e.export);
  }
  const files = new Set<string>();
  for (const name of [...m.exports.map((e) => e.file), ...(m.files ?? []).map((f) => f.name)]) {
    if (files.has(name)) return `has a ${SNAPSHOT_MANIFEST} that names the file ${shown(name)} twice`;
    files.add(name);
  }
  return undefined;
}

/**
 * Opens the snapshot directory `dir`: its manifest read and parsed, nothing else yet; NotASnapshotError (exit 2)
 * ending with `hint` otherwise, and DamagedManifestError (exit 1) for a manifest that lists an export or a file twice.
 */
export async function openSnapshot(
  dir: string,
  hint = `give a snapshot directory (one holding ${SNAPSHOT_MANIFEST})`,
): Promise<Snapshot> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new NotASnapshotError(dir, info ? 'is not a directory' : 'does not exist', hint);
  const opened = snapshotOfManifest(dir, await readManifestJson(dir, SNAPSHOT_MANIFEST));
  if (opened instanceof Snapshot) return opened;
  throw opened.damaged
    ? new DamagedManifestError(dir, opened.problem)
    : new NotASnapshotError(dir, opened.problem, hint);
}

/**
 * What `dir` holds: a snapshot (opened), or a raw collection (undefined: the
 * caller builds it); a usage error ending with `hint` for anything else.
 */
export async function openSnapshotOrCollection(dir: string, hint: string): Promise<Snapshot | undefined> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`${dir} ${info ? 'is not a directory' : 'does not exist'}; ${hint}`);
  const has = async (name: string) => (await lstat(join(dir, name)).catch(() => undefined)) !== undefined;
  if (await has(SNAPSHOT_MANIFEST)) return openSnapshot(dir, hint);
  if (await has(COLLECTION_MANIFEST)) return undefined;
  throw new UsageError(`${dir} holds neither ${SNAPSHOT_MANIFEST} nor ${COLLECTION_MANIFEST}; ${hint}`);
}

/**
 * A snapshot still in its staging directory, with the manifest about to be
 * written: its files are read back unchecked, their hashes computed while
 * writing them into a directory only this process writes (0700).
 */
export function stagedSnapshot(dir: string, manifest: ReadableManifest): Snapshot {
  return new Snapshot(dir, manifest, undefined);
}

/** A file the manifest lists, with what it records of it. */
interface Listed {
  readonly file: string;
  readonly bytes?: number;
  readonly sha256?: string;
}

/** A file the manifest lists: where (`exports[3]`), its name as the manifest gives it (not checked), what it records of it. */
interface ListedEntry {
  /** An export's file is directly in the directory; a file of `files` or a route's may be in raw/. */
  readonly list: 'exports' | 'files' | 'routes';
  readonly index: number;
  readonly name: string;
  readonly bytes?: number | undefined;
  readonly sha256?: string | undefined;
}

/** The files of a snapshot directory (docs/exports.md; docs/spreadsheets.md; docs/verify.md; README.md, "The report"), names `/`-separated. */
export interface SnapshotFiles {
  /** The manifest and its signature. */
  readonly own: readonly string[];
  /** Every file the manifest lists, in its order: each export's, `files`, each route's `raw/<file>`. */
  readonly listed: readonly ListedEntry[];
  /**
   * The files the tool may add after the manifest is written, listed or not:
   * convert's spreadsheet forms, the report's page, raw/'s manifest (an
   * older --raw).
   */
  readonly later: readonly string[];
}

/** A parsed element that is not a record: where, for the message. */
class NotARecord extends Error {
  constructor(readonly index: number) {
    super(`element ${index} is not a record`);
  }
}

/**
 * The file's JSON array, parsed a slice at a time (src/body/slices.ts) as
 * the slices are read: neither its whole text nor, from a file, its whole
 * bytes are held beside the records. Each element must be a record
 * (NotARecord names the first that is not); with `keep`, each is replaced by
 * what keep makes of it as its slice is parsed. Undefined when the file is
 * not JSON; anything else that is JSON (not an array) as it parses.
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
    if (e instanceof NotARecord) return e;
    throw e;
  }
}

/** A function reducing a record to `columns`, in order, a missing one null. */
function keepColumns(columns: readonly string[]): (r: ExportRecord) => ExportRecord {
  const make = recordMaker(columns);
  const values: unknown[] = new Array(columns.length);
  return (r) => {
    for (let i = 0; i < columns.length; i++) values[i] = r[columns[i]!] ?? null;
    return make(values);
  };
}

/** A snapshot directory, opened (openSnapshot, stagedSnapshot). */
export class Snapshot {
  /** The export files read and checked so far: checkRest reads the others. */
  private readonly read = new Set<string>();
  /** Holds one export file's bytes at a time (bytes): reading into pages already touched is faster than into new ones. */
  private buffer = Buffer.alloc(0);

  constructor(
    readonly dir: string,
    readonly manifest: ReadableManifest,
    /** The manifest's bytes as read; undefined for a staged snapshot. */
    readonly manifestBytes: Buffer | undefined,
  ) {}

  /** The files this snapshot directory holds, or may hold, as its manifest accounts for them. */
  files(): SnapshotFiles {
    const m = this.manifest;
    const listed: ListedEntry[] = [
      ...m.exports.map((e, index) => ({
        list: 'exports' as const,
        index,
        name: e.file,
        bytes: e.bytes,
        sha256: e.sha256,
      })),
      ...(m.files ?? []).map((f, index) => ({ list: 'files' as const, index, ...f })),
      ...m.routes.flatMap((r, index) =>
        r.file ? [{ list: 'routes' as const, index, name: `raw/${r.file}`, bytes: r.bytes, sha256: r.sha256 }] : [],
      ),
    ];
    return {
      own: [SNAPSHOT_MANIFEST, `${SNAPSHOT_MANIFEST}${SIGNATURE_SUFFIX}`],
      listed,
      later: [...laterFiles(m), `raw/${COLLECTION_MANIFEST}`],
    };
  }

  /** The manifest's entry of an export, if it lists it. */
  entry(name: string): ManifestEntry | undefined {
    return this.manifest.exports.find((e) => e.export === name);
  }

  private changed(file: string): FailedError {
    const where = `${shown(file)} in ${escapeControl(this.dir)}`;
    return new FailedError(
      `${where} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed after the snapshot was taken`,
    );
  }

  /** The sha256 a file is checked against; none for a staged snapshot, or a manifest written before export hashes. */
  private expected(entry: Listed): string | undefined {
    return this.manifestBytes === undefined ? undefined : entry.sha256;
  }

  /** `use` with the file open, its size checked against the manifest's (where it gives one); exit 1 naming the file when it cannot. */
  private async open<T>(entry: Listed, use: (fd: number, size: number) => Promise<T> | T): Promise<T> {
    // Kept, so that it is what is thrown, however the file's reading wraps it.
    let refused: FailedError | undefined;
    try {
      return await withFileInside(this.dir, entry.file, async (handle, size) => {
        try {
          if (entry.bytes !== undefined && size !== entry.bytes && this.manifestBytes !== undefined) {
            const where = `${shown(entry.file)} in ${escapeControl(this.dir)}`;
            throw new FailedError(
              `${where} is ${size} bytes but ${SNAPSHOT_MANIFEST} says ${entry.bytes}; the file was changed after the snapshot was taken`,
            );
          }
          const result = await use(handle.fd, size);
          this.read.add(entry.file);
          return result;
        } catch (err) {
          if (err instanceof FailedError) refused = err;
          throw err;
        }
      });
    } catch (err) {
      if (refused) throw refused;
      if (err instanceof UnreadableEntryError)
        throw new FailedError(`${err.message}; the snapshot cannot be read`, { cause: err });
      throw err;
    }
  }

  /**
   * The records of an export's file, checked: its sha256, a JSON array of
   * objects, as many as the manifest counts. Parsed a slice at a time as the
   * file is read, so that its bytes are never held whole beside its records;
   * with `columns`, each record holds only those (the findings read a few
   * columns of large exports).
   */
  async records(entry: ManifestEntry, columns?: readonly string[]): Promise<ExportRecord[]> {
    const keep = columns ? keepColumns(columns) : undefined;
    const parsed = await this.open(entry, (fd, size) => {
      const reader = new HashedRange(fd, size, this.expected(entry), () => this.changed(entry.file));
      const json = parseList(reader, keep);
      // Nothing of the file is used before all of it is checked: a file changed while it was read is refused whole.
      reader.finish();
      return json;
    });
    return this.checked(entry, parsed);
  }

  /**
   * The records of an export whose checked bytes are already read (bytes), as
   * `records` gives them: with `keep`, only those columns, or what the
   * function makes of each record as it is parsed.
   */
  parse(
    entry: ManifestEntry,
    bytes: Buffer,
    keep?: readonly string[] | ((r: ExportRecord) => ExportRecord),
  ): ExportRecord[] {
    return this.checked(
      entry,
      parseList(bufferReader(bytes), typeof keep === 'function' ? keep : keep && keepColumns(keep)),
    );
  }

  private checked(entry: ManifestEntry, json: unknown): ExportRecord[] {
    const where = `${shown(entry.file)} in ${escapeControl(this.dir)}`;
    if (json instanceof NotARecord)
      throw new FailedError(`${where}: element ${json.index} is not a record; the snapshot is damaged`);
    if (json === undefined) throw new FailedError(`${where} is not valid JSON; the snapshot is damaged`);
    if (!Array.isArray(json)) throw new FailedError(`${where} is not a JSON array of records; the snapshot is damaged`);
    if (json.length !== entry.count) {
      throw new FailedError(
        `${where} holds ${json.length} records where ${SNAPSHOT_MANIFEST} says ${entry.count}; the snapshot is damaged`,
      );
    }
    return json as ExportRecord[];
  }

  /** Makes the buffer as large as the largest available export file now, so that reading them all needs no other. */
  private async reserve(): Promise<void> {
    let largest = 0;
    for (const e of this.manifest.exports) {
      // A file that cannot be looked at is said by its read.
      if (!e.available || !isPlainFileName(e.file)) continue;
      const st = await lstat(join(this.dir, e.file)).catch(() => undefined);
      if (st?.isFile()) largest = Math.max(largest, st.size);
    }
    if (largest < 2 ** 31 - 1) this.buffer = Buffer.allocUnsafeSlow(largest + 1);
  }

  /**
   * An export file's bytes, checked against the manifest's sha256 as they are
   * read. With `reuse` (the diff's), they are valid until the next call: one
   * buffer, as large as the largest file, holds one file at a time; without
   * (the history's, which keeps texts made of them), a buffer of its own is
   * let go with them.
   */
  async bytes(entry: ManifestEntry, reuse = true): Promise<Buffer> {
    if (reuse && this.buffer.length === 0) await this.reserve();
    return this.readWhole(entry, reuse);
  }

  /** A file of the manifest's `files` (`_findings.json`), read whole and checked against its size and sha256. */
  async listedFile(file: { readonly name: string; readonly bytes: number; readonly sha256: string }): Promise<Buffer> {
    return this.readWhole({ file: file.name, bytes: file.bytes, sha256: file.sha256 }, false);
  }

  /** A file's bytes, hashed as they are read: into the one buffer (`reuse`), else a new one. */
  private readWhole(entry: Listed, reuse: boolean): Promise<Buffer> {
    return this.open(entry, (fd, size) => {
      if (size >= 2 ** 31 - 1) throw new UnreadableEntryError(this.dir, entry.file, 'is too large to be read whole');
      if (reuse && this.buffer.length < size + 1) this.buffer = Buffer.allocUnsafeSlow(size + 1);
      const into = reuse ? this.buffer : Buffer.allocUnsafe(size + 1);
      const sha256 = this.expected(entry);
      const hash = sha256 === undefined ? undefined : createHash('sha256');
      // One byte more than the size: a file that grew since is read that far, and refused.
      let length = 0;
      for (const piece of hashedPieces(fd, hash, 0, size + 1, into)) length += piece.length;
      if (length !== size || (hash !== undefined && hash.digest('hex') !== sha256)) throw this.changed(entry.file);
      return into.subarray(0, length);
    });
  }

  /**
   * Every export file not read yet, checked: a snapshot whose files were
   * edited is refused whole (exit 1), as `verify` refuses it, also where a
   * command reads only some of them. With `use`, each available export's
   * bytes are read and given to it, one after another; the others are only
   * hashed.
   */
  async checkRest(use?: (entry: ManifestEntry, bytes: Buffer) => void): Promise<void> {
    for (const e of this.manifest.exports) {
      if (this.read.has(e.file)) continue;
      if (use && e.available) {
        use(e, await this.bytes(e));
        continue;
      }
      const sha256 = this.expected(e);
      if (sha256 === undefined) continue;
      const actual = await this.open(e, (fd) => hashFile(fd).sha256);
      if (actual !== sha256) throw this.changed(e.file);
    }
    // Every file is read now: the buffer of the largest is let go (a later read makes another).
    this.buffer = Buffer.alloc(0);
  }
}
