/**
 * A streaming ZIP writer (PKWARE APPNOTE 6.3: deflate, data descriptors,
 * UTF-8 names, no ZIP64): what an XLSX package needs and nothing more. Each
 * entry's text is compressed as it is produced, so a sheet of a million rows
 * is never one string or one buffer. Entries carry a fixed time (the
 * snapshot's), so the same snapshot gives the same bytes.
 */
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

/** Uncompressed bytes gathered before they are compressed. */
const BLOCK_BYTES = 1 << 20;
const MAX_32 = 0xffffffff;
/** zlib's fastest level: sheet XML is repetitive enough that a higher one gains little (docs/performance.md). */
const LEVEL = 1;

export class ZipTooLargeError extends Error {}

/** What the data descriptor of an entry says of its content. */
interface DeflatedEntry {
  readonly crc: number;
  readonly compressed: number;
  readonly size: number;
}

interface Entry extends DeflatedEntry {
  readonly name: Buffer;
  readonly offset: number;
}

/** DOS date and time fields of a UTC instant (the format has no zone; 1980 is its epoch). */
function dosDateTime(time: Date): { date: number; time: number } {
  const y = Math.min(2107, Math.max(1980, time.getUTCFullYear()));
  return {
    date: ((y - 1980) << 9) | ((time.getUTCMonth() + 1) << 5) | time.getUTCDate(),
    time: (time.getUTCHours() << 11) | (time.getUTCMinutes() << 5) | Math.floor(time.getUTCSeconds() / 2),
  };
}

/** One block's raw deflate stream, on libuv's thread pool. */
function deflateBlock(data: Buffer): Promise<Buffer> {
  // A sync flush ends the piece on a byte boundary without a final block, so independent pieces concatenate into
  // one deflate stream. One output buffer holds the whole result (deflate's worst case adds about 1/8), so that
  // the thread pool hands back each block in one piece rather than a chunk at a time.
  return deflateRawAsync(data, {
    level: LEVEL,
    finishFlush: constants.Z_SYNC_FLUSH,
    chunkSize: data.length + (data.length >> 3) + 1024,
  });
}

/** Where a slice of `piece` from `i` that fits in `room` bytes of UTF-8 ends. */
function sliceEnd(piece: string, i: number, room: number): number {
  // At most 3 bytes of UTF-8 per UTF-16 code unit; never split a surrogate pair.
  let end = Math.min(piece.length, i + Math.floor(room / 3));
  if (end < piece.length && end > i) {
    const last = piece.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
  }
  return end;
}

/**
 * An entry's content, compressed: the raw deflate stream of its text pieces,
 * as buffers, and as the generator's value what its data descriptor says.
 * Each block is compressed on libuv's thread pool while the next block's
 * text is produced, so compression takes another core rather than adding to
 * this thread. `inspect` sees every uncompressed block before it is
 * compressed, with the last `overlap` bytes of the block before in front of
 * it. The bytes depend only on the pieces' text, not on where this runs.
 */
async function* deflateEntry(
  name: string,
  pieces: Iterable<string>,
  inspect: (block: Buffer) => void,
  overlap: number,
): AsyncGenerator<Buffer, DeflatedEntry> {
  let crc = 0;
  let size = 0;
  let compressed = 0;
  // Two blocks, filled in turn: one is compressed on the thread pool while
  // the other is filled, so no block is copied or allocated per flush.
  let block = Buffer.allocUnsafe(BLOCK_BYTES + overlap);
  let spare = Buffer.allocUnsafe(BLOCK_BYTES + overlap);
  let carried = 0;
  let used = 0;
  /** The block in compression; at most one, so memory stays two blocks. */
  let pending: Promise<Buffer> | undefined;
  async function* settle(): AsyncGenerator<Buffer> {
    if (pending === undefined) return;
    const out = await pending;
    pending = undefined;
    compressed += out.length;
    yield out;
  }
  async function* flush(): AsyncGenerator<Buffer> {
    if (used === carried) return;
    inspect(block.subarray(0, used));
    const data = block.subarray(carried, used);
    crc = crc32(data, crc);
    size += data.length;
    if (size > MAX_32)
      throw new ZipTooLargeError(`${name} would exceed 4 GB uncompressed, the limit of a ZIP file without ZIP64`);
    // The other block is free once its compression is settled.
    yield* settle();
    pending = deflateBlock(data);
    // Settled (and any failure thrown) by the next flush or the end of the entry.
    pending.catch(() => {});
    // The next block starts with this one's tail, for the inspector's overlap; this one is not written to until it is compressed.
    const keep = Math.min(overlap, used);
    block.copy(spare, 0, used - keep, used);
    [block, spare] = [spare, block];
    carried = used = keep;
  }
  for (const piece of pieces) {
    for (let i = 0; i < piece.length;) {
      const end = sliceEnd(piece, i, BLOCK_BYTES + overlap - used);
      if (end <= i) {
        yield* flush();
        continue;
      }
      used += block.write(piece.slice(i, end), used, 'utf8');
      i = end;
      if (used - carried >= BLOCK_BYTES) yield* flush();
    }
  }
  yield* flush();
  yield* settle();
  // The final, empty deflate block.
  compressed += 2;
  yield Buffer.from([0x03, 0x00]);
  return { crc, compressed, size };
}

/**
 * Writes a ZIP file as a sequence of buffers: `entry()` for each file with
 * its content as text pieces, then `end()`. `inspect` sees every
 * uncompressed block before it is compressed (with the tail of the previous
 * block in front of it), so a caller can refuse content that the compressed
 * bytes would hide from a scan.
 */
export class ZipWriter {
  private readonly entries: Entry[] = [];
  private offset = 0;
  private readonly stamp: { date: number; time: number };

  constructor(
    time: Date,
    private readonly inspect: (block: Buffer) => void = () => {},
    private readonly overlap = 0,
  ) {
    this.stamp = dosDateTime(time);
  }

  private count(buf: Buffer): Buffer {
    this.offset += buf.length;
    if (this.offset > MAX_32)
      throw new ZipTooLargeError('the workbook would exceed 4 GB, the limit of a ZIP file without ZIP64');
    return buf;
  }

  private header(nameBuf: Buffer): Buffer {
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    // bit 3: sizes and CRC follow the data; bit 11: the name is UTF-8.
    header.writeUInt16LE(0x0808, 6);
    header.writeUInt16LE(8, 8);
    header.writeUInt16LE(this.stamp.time, 10);
    header.writeUInt16LE(this.stamp.date, 12);
    header.writeUInt16LE(nameBuf.length, 26);
    return Buffer.concat([header, nameBuf]);
  }

  private descriptor(entry: Entry): Buffer {
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc >>> 0, 4);
    descriptor.writeUInt32LE(entry.compressed, 8);
    descriptor.writeUInt32LE(entry.size, 12);
    this.entries.push(entry);
    return this.count(descriptor);
  }

  /** The bytes of one entry: header, compressed content (deflateEntry), data descriptor. */
  async *entry(name: string, pieces: Iterable<string>): AsyncGenerator<Buffer> {
    const nameBuf = Buffer.from(name, 'utf8');
    const offset = this.offset;
    yield this.count(this.header(nameBuf));
    const content = deflateEntry(name, pieces, this.inspect, this.overlap);
    let step = await content.next();
    for (; !step.done; step = await content.next()) yield this.count(step.value);
    yield this.descriptor({ name: nameBuf, offset, ...step.value });
  }

  /** The central directory and its end record. */
  end(): Buffer {
    const start = this.offset;
    const parts: Buffer[] = [];
    for (const e of this.entries) {
      const h = Buffer.alloc(46);
      h.writeUInt32LE(0x02014b50, 0);
      h.writeUInt16LE(20, 4);
      h.writeUInt16LE(20, 6);
      h.writeUInt16LE(0x0808, 8);
      h.writeUInt16LE(8, 10);
      h.writeUInt16LE(this.stamp.time, 12);
      h.writeUInt16LE(this.stamp.date, 14);
      h.writeUInt32LE(e.crc >>> 0, 16);
      h.writeUInt32LE(e.compressed, 20);
      h.writeUInt32LE(e.size, 24);
      h.writeUInt16LE(e.name.length, 28);
      h.writeUInt32LE(e.offset, 42);
      parts.push(h, e.name);
    }
    const directory = Buffer.concat(parts);
    const eocd = Buffer.alloc(22);
    eocd.writeUInt32LE(0x06054b50, 0);
    eocd.writeUInt16LE(this.entries.length, 8);
    eocd.writeUInt16LE(this.entries.length, 10);
    eocd.writeUInt32LE(directory.length, 12);
    eocd.writeUInt32LE(start, 16);
    return this.count(Buffer.concat([directory, eocd]));
  }
}
