import { createHash, type Hash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { escapeControl } from './escape.js';
import { describeJsonError } from './json-error.js';

/**
 * Why a file of a collection or snapshot was not read. `problem` never holds
 * any of the file's content: the name may point at a file the user never
 * meant to show.
 */
export class UnreadableEntryError extends Error {
  constructor(
    readonly dir: string,
    readonly file: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${escapeControl(file)} in ${escapeControl(dir)} ${problem}`, options);
    this.name = 'UnreadableEntryError';
  }
}

/** A name from a manifest: one plain file name, no separator, no `.` or `..`, no NUL. */
export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

// O_NONBLOCK: opening a FIFO planted under an expected name must not hang the run.
export const SAFE_OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Reads `name` in `dir` only if it is a regular file directly inside `dir`:
 * never through a symbolic link (O_NOFOLLOW on the last component, which is
 * the only one, since the name has no separator), never a device, FIFO or
 * directory. Used by replay and diff, and meant for every reader of a
 * collection or snapshot.
 */
export async function readInside(dir: string, name: string): Promise<Buffer> {
  return withFileInside(dir, name, (handle) => handle.readFile());
}

/** A manifest is a few MB at most; past this it is not one. */
export const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A manifest's bytes, read as readInside reads a file (one larger than a
 * manifest ever is is refused unread), and their parse; else why not: the
 * file's problem (`unreadable`), or where its JSON fails (`invalid`).
 */
export async function readManifestJson(
  dir: string,
  name: string,
): Promise<{ bytes: Buffer; json: unknown } | { unreadable: string } | { invalid: string }> {
  let bytes: Buffer;
  try {
    bytes = await withFileInside(dir, name, async (handle, size) => {
      const limit = `${MANIFEST_MAX_BYTES / 1024 / 1024} MiB`;
      if (size > MANIFEST_MAX_BYTES)
        throw new UnreadableEntryError(dir, name, `is larger than ${limit}, far larger than a manifest`);
      return handle.readFile();
    });
  } catch (err) {
    if (err instanceof UnreadableEntryError) return { unreadable: err.problem };
    throw err;
  }
  const text = bytes.toString('utf8');
  try {
    return { bytes, json: JSON.parse(text) };
  } catch (e) {
    return { invalid: describeJsonError(e, text) };
  }
}

/**
 * `use` with the file `name` in `dir` open, under readInside's rules (a
 * regular file directly inside `dir`, never through a link), and its size.
 */
export async function withFileInside<T>(
  dir: string,
  name: string,
  use: (handle: FileHandle, size: number) => Promise<T>,
): Promise<T> {
  if (!isPlainFileName(name))
    throw new UnreadableEntryError(
      dir,
      name,
      'is not a plain file name (a manifest may only name files directly inside its directory)',
    );
  let handle;
  try {
    handle = await open(path.join(dir, name), SAFE_OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK')
      throw new UnreadableEntryError(
        dir,
        name,
        'is a symbolic link; only regular files inside the directory are read',
        { cause: err },
      );
    if (code === 'ENOENT') throw new UnreadableEntryError(dir, name, 'does not exist', { cause: err });
    throw new UnreadableEntryError(dir, name, `cannot be opened (${code ?? 'error'})`, { cause: err });
  }
  try {
    const st = await handle.stat();
    if (!st.isFile())
      throw new UnreadableEntryError(
        dir,
        name,
        'is not a regular file; only regular files inside the directory are read',
      );
    return await use(handle, st.size);
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw err;
    throw new UnreadableEntryError(dir, name, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: err,
    });
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of an open file whose fstat gave `size` (checked by the caller
 * against its own limit): read from its start, and cut where the file turned
 * out shorter. Synchronous: for small files read before anything else runs
 * (a token file, a signing key, an allowed_signers file, a manifest).
 */
function readOpenedFile(fd: number, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

/** Why readSmallFile read nothing: the open's error code (ELOOP or EMLINK: a link not followed), or what the file is. */
export type SmallFileProblem =
  | { readonly problem: 'unopened'; readonly code: string }
  | { readonly problem: 'not a regular file' }
  | { readonly problem: 'too large' };

/**
 * The bytes of a small file named by the user (a token file, a key, a CA
 * bundle, a waivers file, a manifest), or why they were not read. Opened
 * without blocking (a FIFO or device given by mistake must not hang the
 * run), through a symbolic link only with `followLinks`; checked on the
 * open file, in this order: a regular file, then `check` (which throws the
 * caller's own error), then at most `maxBytes`. Each caller words the
 * problem its own way.
 */
export function readSmallFile(
  file: string,
  opts: { readonly maxBytes: number; readonly followLinks: boolean; readonly check?: (st: Stats) => void },
): Buffer | SmallFileProblem {
  let fd: number;
  try {
    fd = openSync(file, opts.followLinks ? constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) : SAFE_OPEN_FLAGS);
  } catch (err) {
    return { problem: 'unopened', code: (err as NodeJS.ErrnoException).code ?? 'error' };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { problem: 'not a regular file' };
    opts.check?.(st);
    if (st.size > opts.maxBytes) return { problem: 'too large' };
    return readOpenedFile(fd, st.size);
  } finally {
    closeSync(fd);
  }
}

/** Bytes read at a time when a file is hashed or copied. */
const PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Bytes `from` to `to` of an open file (to its end by default), a piece at a
 * time, each added to `hash` (if any) before it is given out: the one loop
 * that hashes a file. Synchronous reads: the page cache answers in a few ms, and
 * the build that reads a body's file is a synchronous generator. Each piece
 * is a new buffer, or with `into` the next part of that buffer, from its
 * start again once it is full (a caller done with each piece before it asks
 * for the next; or, as large as the range, the range whole). Stops early
 * where the file ends.
 */
export function* hashedPieces(
  fd: number,
  hash: Hash | undefined,
  from = 0,
  to = Infinity,
  into?: Buffer,
): Generator<Buffer> {
  for (let at = from; at < to;) {
    const buf = into ?? Buffer.allocUnsafe(Math.min(PIECE_BYTES, to - at));
    const offset = into ? (at - from) % into.length : 0;
    const n = readSync(fd, buf, offset, Math.min(buf.length - offset, to - at), at);
    if (n === 0) return;
    const piece = buf.subarray(offset, offset + n);
    hash?.update(piece);
    at += n;
    yield piece;
  }
}

/** Lower-case hex SHA-256 of bytes in memory (a body, an export's text), as manifests record it. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The size and sha256 of an open file, read from its start to its end a piece at a time (never held whole). */
export function hashFile(fd: number): { size: number; sha256: string } {
  const hash = createHash('sha256');
  let size = 0;
  for (const piece of hashedPieces(fd, hash, 0, Infinity, Buffer.allocUnsafe(PIECE_BYTES))) size += piece.length;
  return { size, sha256: hash.digest('hex') };
}
