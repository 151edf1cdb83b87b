import { FailedError } from '../errors.js';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { stagingPrefix } from './leftovers.js';
import { isLiveStaging, noteTarget, registerStaging, unregisterStaging } from './registry.js';
import { describeFsError } from '../util/fs-error.js';
import { escapeControl } from '../util/escape.js';
import { SecretSearch, secretFound, secretMatcher } from './scan.js';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** A file's contents, a chunk at a time. */
type Chunks = Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/** A temporary directory beside a target, filled and then published by `commit`. */
export interface Staging {
  /** Absolute path of the staging directory. */
  readonly dir: string;
  /** Writes `relPath` (relative, inside `dir`) with mode 0600, creating directories with 0700. */
  writeFile(relPath: string, data: string | Uint8Array): Promise<void>;
  /**
   * Writes `relPath` as the concatenation of `chunks`, one at a time (strings
   * as UTF-8): a large file need never be one string or one buffer in memory.
   * `onBytes` sees every byte of the file, in order, as it is written (to
   * hash it without encoding its strings a second time).
   */
  writeChunks(relPath: string, chunks: Chunks, onBytes?: (bytes: Uint8Array) => void): Promise<void>;
  /** Removes the staging directory; does nothing once it is discarded or published. */
  discard(): void;
  /** The secrets every write searches its bytes for (a write that holds one fails, naming the file). */
  readonly secrets: readonly string[];
  /**
   * Files written whole by writeFile/writeChunks, every byte searched for
   * `secrets` on the way (relative paths as the pre-publish scan lists them),
   * each with its fileIdentity once written. The scan does not read such a
   * file again while it is still that file.
   */
  readonly searched: ReadonlyMap<string, string>;
}

/** What says a file is still the one written: its size, modification time (ns) and inode; '' for no plain file. */
export function fileIdentity(file: string): string {
  const st = lstatSync(file, { bigint: true, throwIfNoEntry: false });
  return st?.isFile() ? `${st.size}:${st.mtimeNs}:${st.ino}` : '';
}

/** Absolute target path, its parent, and its base name. */
export function targetParts(targetDir: string): { target: string; parent: string; base: string } {
  const target = path.resolve(targetDir);
  const parent = path.dirname(target);
  const base = path.basename(target);
  if (parent === target || base === '') throw new Error(`cannot publish to ${target}: it has no parent directory`);
  return { target, parent, base };
}

/**
 * Creates the staging directory in the target's parent, so that publishing is
 * a rename within one file system. Created and registered synchronously: no
 * signal can arrive between the two.
 */
export async function createStaging(targetDir: string, secrets: readonly string[] = []): Promise<Staging> {
  const { target, parent, base } = targetParts(targetDir);
  noteTarget(target);
  let dir: string;
  try {
    ensureDirSync(parent);
    dir = mkdtempSync(path.join(parent, stagingPrefix(base)));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const why =
      describeFsError(err, parent, true) ??
      `cannot write into ${parent} (${code}); nothing was published. Choose another output directory (--out-dir)`;
    throw new FailedError(why, { cause: err });
  }
  registerStaging(dir);
  try {
    chmodSync(dir, DIR_MODE);
  } catch (err) {
    discardDir(dir);
    throw err;
  }
  const matcher = secretMatcher(secrets);
  const searched = new Map<string, string>();
  /** Writes one file with a search of its bytes; the file counts as searched once the write is whole. */
  const write = async (relPath: string, chunks: Chunks, onBytes?: (bytes: Uint8Array) => void): Promise<void> => {
    const segments = safeSegments(dir, relPath);
    const rel = segments.join(path.sep);
    searched.delete(rel);
    const search = matcher ? new SecretSearch(matcher) : undefined;
    try {
      await writeChunksInto({ dir, segments, search, rel }, chunks, onBytes);
    } catch (err) {
      // A file-system failure names the file, what happened and what to do.
      const message = describeFsError(err, path.join(dir, relPath));
      if (message) throw new FailedError(message, { cause: err });
      throw err;
    }
    searched.set(rel, fileIdentity(path.join(dir, rel)));
  };
  return {
    dir,
    secrets: [...secrets],
    searched,
    writeFile: (relPath, data) => write(relPath, [data]),
    writeChunks: write,
    discard: () => discardDir(dir),
  };
}

/** One file being written: where, and the search its bytes go through before they reach the disk. */
interface WriteTarget {
  readonly dir: string;
  /** The path inside `dir`, checked (safeSegments). */
  readonly segments: readonly string[];
  /** The path as the pre-publish scan lists it (for its message). */
  readonly rel: string;
  readonly search: SecretSearch | undefined;
}

/** Bytes about to be written, searched first (a secret among them fails the write before they reach the disk), then shown to `onBytes`. */
function searched(t: WriteTarget, bytes: Uint8Array, onBytes?: (bytes: Uint8Array) => void): Uint8Array {
  if (t.search?.push(bytes)) throw secretFound(t.search.found!, `output file ${escapeControl(t.rel)}`);
  onBytes?.(bytes);
  return bytes;
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir never returns for a
 * path under /proc (it keeps retrying ENOENT), so the missing levels are
 * created one by one and the first failure is thrown.
 */
function ensureDirSync(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) mkdirSync(d, { mode: DIR_MODE });
}

function discardDir(dir: string): void {
  if (!isLiveStaging(dir)) return;
  rmSync(dir, { recursive: true, force: true });
  unregisterStaging(dir);
}

/** Strings are encoded into one reused buffer of this size, written when full. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

async function writeChunksInto(t: WriteTarget, chunks: Chunks, onBytes?: (bytes: Uint8Array) => void): Promise<void> {
  const file = await prepareFile(t.dir, t.segments);
  const handle = await open(file, 'w', FILE_MODE);
  try {
    const buf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
    let used = 0;
    const flush = async () => {
      await writeAll(handle, searched(t, buf.subarray(0, used), onBytes));
      used = 0;
    };
    for await (const chunk of chunks) {
      if (typeof chunk !== 'string') {
        await flush();
        await writeAll(handle, searched(t, chunk, onBytes));
        continue;
      }
      for (const piece of pieces(chunk, buf.length / 3)) {
        // At most 3 bytes of UTF-8 per UTF-16 code unit.
        if (piece.length * 3 > buf.length - used) await flush();
        used += buf.write(piece, used, 'utf8');
      }
    }
    await flush();
  } finally {
    await handle.close();
  }
}

/** `text` in slices of at most `max` code units, never between the two halves of a surrogate pair. */
function* pieces(text: string, max: number): Generator<string> {
  if (text.length <= max) {
    yield text;
    return;
  }
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + max);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(i, end);
    i = end;
  }
}

/** Writes all of `data`: one write may take only part of it. */
export async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.length) done += (await handle.write(data, done, data.length - done)).bytesWritten;
}

/** The absolute path of `segments` (from safeSegments), its directories created (0700), after checking the staging directory is still live. */
async function prepareFile(dir: string, segments: readonly string[]): Promise<string> {
  assertLive(dir);
  // One level at a time, never `recursive`: if the staging directory is
  // discarded while this write is in flight, mkdir fails instead of
  // re-creating it and leaving it behind.
  let current = dir;
  for (const segment of segments.slice(0, -1)) {
    current = path.join(current, segment);
    try {
      await mkdir(current, { mode: DIR_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  assertLive(dir);
  return path.join(dir, ...segments);
}

/** Path segments of `relPath`, refusing anything that is absolute or leaves `dir`. */
function safeSegments(dir: string, relPath: string): string[] {
  const rel = path.relative(dir, path.resolve(dir, relPath));
  if (
    relPath === '' ||
    relPath.includes('\0') ||
    path.isAbsolute(relPath) ||
    rel === '' ||
    rel === '..' ||
    rel.startsWith(`..${path.sep}`) ||
    path.isAbsolute(rel)
  ) {
    throw new Error(`refusing to write ${JSON.stringify(relPath)}: not a relative path inside the staging directory`);
  }
  return rel.split(path.sep);
}

export function assertLive(dir: string): void {
  if (!isLiveStaging(dir)) throw new Error(`staging directory ${dir} was already published or discarded`);
}
