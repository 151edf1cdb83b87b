/**
 * The tar inside an archive, read as its bytes come, a piece at a time:
 * ustar headers (the name in the prefix and name fields), GNU tar's (a long
 * name in an `L` entry before its own) and pax extended headers (their
 * `path` and `size` records). A global pax header, a long link name, a
 * directory's data and empty blocks are skipped. A header whose checksum is
 * wrong, in neither format, or with a size that is no number, is no tar;
 * bytes that end inside a header, or inside an entry's data or padding, are
 * a cut one.
 */
const BLOCK = 512;
/** A long name or pax header past this is not one. */
const MAX_META = 1024 * 1024;

/** A tar that could not be read as one: the message says which of not a tar or cut. */
export class TarProblem extends Error {}

const notTar = () => new TarProblem('not an archive of an output: what age decrypts is not a tar');

export interface TarHeader {
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symbolic link' | 'other';
  readonly size: number;
}

/** The type of an entry by its type flag (a directory also by a name ending in `/`, as old tars wrote it). */
const TYPES: Readonly<Record<string, TarHeader['type']>> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file',
  '2': 'symbolic link',
};

/** Where an entry's data goes, a piece at a time (each piece is read only before the next is given). */
export interface EntrySink {
  data(piece: Buffer): void;
  end(): void;
}

function text(block: Buffer, at: number, length: number): string {
  const nul = block.subarray(at, at + length).indexOf(0);
  return block.toString('utf8', at, nul < 0 ? at + length : at + nul);
}

/** An octal field (spaces and NULs around it), or GNU's base-256 for a large size; NaN for anything else. */
function number(block: Buffer, at: number, length: number): number {
  if (block[at] === 0x80) {
    let n = 0;
    for (let i = at + 1; i < at + length; i++) n = n * 256 + block[i]!;
    return Number.isSafeInteger(n) ? n : NaN;
  }
  const digits = text(block, at, length).trim();
  return /^[0-7]*$/.test(digits) ? Number.parseInt(digits || '0', 8) : NaN;
}

/** The records of a pax extended header that name the next entry: `length key=value\n` each. */
function paxOf(bytes: Buffer): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  for (let at = 0; at < bytes.length;) {
    const space = bytes.indexOf(32, at);
    const length = Number(bytes.toString('latin1', at, space));
    if (space < 0 || !Number.isSafeInteger(length) || at + length > bytes.length || space >= at + length)
      throw notTar();
    const record = bytes.toString('utf8', space + 1, at + length - 1);
    const value = record.slice(record.indexOf('=') + 1);
    if (record.startsWith('path=')) {
      if (value.includes('\0')) throw notTar();
      out.path = value;
    } else if (record.startsWith('size=')) {
      out.size = /^\d+$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(out.size)) throw notTar();
    }
    at += length;
  }
  return out;
}

/** A header block's type flag, size and name (with ustar's prefix); undefined for an empty block. */
function fieldsOf(block: Buffer): { flag: string; size: number; name: string } | undefined {
  let sum = 8 * 32;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
  if (sum === 8 * 32) return undefined;
  const magic = block.toString('latin1', 257, 265);
  const ustar = magic.startsWith('ustar\0');
  if (sum !== number(block, 148, 8) || (!ustar && magic !== 'ustar  \0')) throw notTar();
  const own = text(block, 0, 100);
  return {
    flag: String.fromCharCode(block[156]!),
    size: number(block, 124, 12),
    name: ustar && block[345] !== 0 ? `${text(block, 345, 155)}/${own}` : own,
  };
}

/** A tar read from the bytes given to `write`: each entry's header to `open`, its data to the sink that returns. */
export function tarReader(open: (header: TarHeader) => EntrySink): { write(bytes: Buffer): void; end(): void } {
  /** A header's first bytes, when a piece ended inside it. */
  let head = Buffer.alloc(0);
  /** The current entry's data still to come, then its padding. */
  let left = 0;
  let padding = 0;
  let sink: EntrySink | undefined;
  /** A long name or pax header being read, and what the last one said of the next entry. */
  let meta: { flag: string; parts: Buffer[] } | undefined;
  let longName: string | undefined;
  let pax: { path?: string; size?: number } = {};

  const finish = () => {
    sink?.end();
    sink = undefined;
    if (meta === undefined) return;
    const bytes = Buffer.concat(meta.parts);
    if (meta.flag === 'L') longName = text(bytes, 0, bytes.length);
    if (meta.flag === 'x') pax = paxOf(bytes);
    meta = undefined;
  };

  const header = (block: Buffer) => {
    const fields = fieldsOf(block);
    if (fields === undefined) return;
    const { flag } = fields;
    let size = fields.size;
    if ('xgLK'.includes(flag)) {
      if (!(size <= MAX_META)) throw notTar();
      meta = { flag, parts: [] };
    } else {
      const name = pax.path ?? longName ?? fields.name;
      size = pax.size ?? size;
      pax = {};
      longName = undefined;
      if (!(size >= 0)) throw notTar();
      const type =
        flag === '5' || ('0\0'.includes(flag) && name.endsWith('/')) ? 'directory' : (TYPES[flag] ?? 'other');
      if (type === 'directory') size = 0;
      sink = open({ name, type, size });
    }
    left = size;
    padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (left === 0) finish();
  };

  return {
    write(bytes) {
      for (let at = 0; at < bytes.length;) {
        if (left > 0) {
          const piece = bytes.subarray(at, at + Math.min(left, bytes.length - at));
          if (meta) meta.parts.push(Buffer.from(piece));
          else sink?.data(piece);
          left -= piece.length;
          at += piece.length;
          if (left === 0) finish();
        } else if (padding > 0) {
          const n = Math.min(padding, bytes.length - at);
          padding -= n;
          at += n;
        } else if (head.length === 0 && bytes.length - at >= BLOCK) {
          header(bytes.subarray(at, at + BLOCK));
          at += BLOCK;
        } else {
          const n = Math.min(BLOCK - head.length, bytes.length - at);
          head = Buffer.concat([head, bytes.subarray(at, at + n)]);
          at += n;
          if (head.length < BLOCK) continue;
          const block = head;
          head = Buffer.alloc(0);
          header(block);
        }
      }
    },
    end() {
      if (head.length > 0 || left > 0 || padding > 0)
        throw new TarProblem('cut: the tar inside ends early (the archive was cut on a chunk boundary)');
    },
  };
}
