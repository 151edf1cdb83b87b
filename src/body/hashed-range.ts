/**
 * A file's bytes by range, read synchronously from an open descriptor (the
 * page cache answers in a few ms), hashed on the way when a sha256 is
 * expected: the slices of an array (src/body/slices.ts) read it forward, and
 * `finish` hashes what no slice read and compares. The file is never held
 * whole, so its records are never beside all of its bytes.
 */
import { createHash, type Hash } from 'node:crypto';
import { readSync } from 'node:fs';
import type { ByteReader } from './reader.js';
import { hashedPieces } from '../util/safe-read.js';

export class HashedRange implements ByteReader {
  private readonly hash: Hash | undefined;
  /** Bytes [0, hashed) have gone into the hash, in order. */
  private hashed = 0;

  /**
   * `changed` is the error for a file that is no longer the expected bytes
   * (shorter than `size`, or another sha256); without `sha256`, only a short
   * read is one.
   */
  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly sha256: string | undefined,
    private readonly changed: () => Error,
  ) {
    this.hash = sha256 === undefined ? undefined : createHash('sha256');
  }

  read(start: number, end: number): Buffer {
    end = Math.min(end, this.size);
    if (this.hash === undefined) return this.readRange(start, end);
    // The comma between two slices is never in either: hash such a small gap now rather than the whole rest at the end.
    if (start > this.hashed && start - this.hashed <= 64) this.hashRange(this.hashed, start);
    const buf = this.readRange(start, end);
    if (start <= this.hashed && end > this.hashed) {
      this.hash.update(buf.subarray(this.hashed - start));
      this.hashed = end;
    }
    return buf;
  }

  /** Once every byte the caller needs was read: throws `changed()` when the file is not the expected bytes. */
  finish(): void {
    if (this.hash === undefined) return;
    if (this.hashed < this.size) this.hashRange(this.hashed, this.size);
    if (this.hash.digest('hex') !== this.sha256) throw this.changed();
  }

  private hashRange(from: number, to: number): void {
    let at = from;
    for (const piece of hashedPieces(this.fd, this.hash!, from, to)) at += piece.length;
    if (at < to) throw this.changed();
    this.hashed = to;
  }

  private readRange(start: number, end: number): Buffer {
    const buf = Buffer.allocUnsafe(Math.max(0, end - start));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(this.fd, buf, got, buf.length - got, start + got);
      if (n === 0) throw this.changed();
      got += n;
    }
    return buf;
  }
}
