/**
 * KEPT FOR MEMORY, FENCED: a body read from its file. Equivalent to the same
 * bytes held in memory (the build writes the same files), and refused when
 * the file no longer has the manifest's sha256. Held by
 * test/unit/body-slices.test.ts ('a large body read back from a collection',
 * and a live run's bodies spooled to disk) and
 * test/unit/in-process-snapshot.test.ts (a live run with every array body
 * counted large, spooled and in raw/, writes the recording's exports).
 *
 * A large body of a raw collection left on disk: `--replay` (and diff and
 * history load of a collection) read such a file a slice at a time when the
 * build parses it, instead of holding its bytes beside the records made of
 * them. Every read of the file hashes it on the way and compares with the
 * manifest's sha256 once it is read whole, so a file changed after
 * readCollection checked it is refused, not built from.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync } from 'node:fs';
import path from 'node:path';
import { bufferReader, type ByteReader } from './reader.js';
import { FailedError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { HashedRange } from './hashed-range.js';
import { hashedPieces, SAFE_OPEN_FLAGS } from '../util/safe-read.js';

/**
 * Bodies of at least this many bytes stay on disk when a collection is read
 * back: below it, holding the bytes costs less than reading the file twice
 * (once to check its sha256, once to build).
 */
export const LARGE_BODY_BYTES = 128 * 1024 * 1024;

/**
 * The most a snapshot or collect reads of one response body, which past
 * LARGE_BODY_BYTES streams to disk: past it the route fails. It bounds only
 * the disk a hostile server fills; twenty times the bench's huge site's
 * drives body (828 MB), and more than the build of such a body could hold
 * in memory (docs/decisions.md, "The largest body read").
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024 * 1024;

/** The most `check` and `audit` read of one response body, which they hold in memory (no spool). */
export const MAX_MEMORY_BODY_BYTES = 1024 * 1024 * 1024;

export class BodyFile {
  constructor(
    readonly dir: string,
    readonly name: string,
    readonly size: number,
    readonly sha256: string,
  ) {}

  get path(): string {
    return path.join(this.dir, this.name);
  }

  /** The message for a file whose bytes are no longer those collected. */
  changed(): FailedError {
    return new FailedError(
      `${escapeControl(this.name)} in ${escapeControl(this.dir)} does not match the sha256 in the collection ` +
        `manifest: it was changed after collection; refusing to build from it`,
    );
  }

  /** The file's bytes in order, a few MB at a time, checked against the sha256 at the end (raw/ of a replay copies them). */
  *chunks(): Generator<Buffer> {
    const fd = openSync(this.path, SAFE_OPEN_FLAGS);
    try {
      const hash = createHash('sha256');
      let done = 0;
      for (const piece of hashedPieces(fd, hash)) {
        done += piece.length;
        yield piece;
      }
      if (done !== this.size || hash.digest('hex') !== this.sha256) throw this.changed();
    } finally {
      closeSync(fd);
    }
  }
}

/** A collection's body: the bytes received, or (read back, and large) the file holding them. */
export type Body = Buffer | BodyFile;

/** A body's bytes by range; `done` (once every byte was read, or on failure) checks a file's sha256 and closes it. */
export type BodyReader = ByteReader & { done(): void };

export function openBody(body: Body): BodyReader {
  if (Buffer.isBuffer(body)) return { ...bufferReader(body), done: () => {} };
  return new FileReader(body);
}

/** Synchronous reads: the build is a synchronous generator, and the reads come from the page cache in a few ms. */
class FileReader implements BodyReader {
  readonly size: number;
  private fd: number | undefined;
  private readonly range: HashedRange;

  constructor(file: BodyFile) {
    try {
      this.fd = openSync(file.path, SAFE_OPEN_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      const where = `${escapeControl(file.name)} in ${escapeControl(file.dir)}`;
      throw new FailedError(`${where} cannot be read back (${code}); refusing to build from it`, { cause: err });
    }
    const st = fstatSync(this.fd);
    this.size = st.size;
    if (!st.isFile() || st.size !== file.size) {
      this.close();
      throw file.changed();
    }
    this.range = new HashedRange(this.fd, this.size, file.sha256, () => file.changed());
  }

  read(start: number, end: number): Buffer {
    if (this.fd === undefined) throw new Error('internal: read of a body file after done');
    return this.range.read(start, end);
  }

  done(): void {
    if (this.fd === undefined) return;
    try {
      this.range.finish();
    } finally {
      this.close();
    }
  }

  private close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
