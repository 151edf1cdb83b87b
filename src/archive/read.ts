/**
 * Reading an archive (`<dir>.tar.age`) for `verify`. Without an identity,
 * what can be checked without the key: the age header parses (version
 * line, recipient stanzas, MAC line) and the payload's size is one the
 * STREAM format allows (a nonce, then 64 KiB chunks each with its 16-byte
 * tag; a file cut to leave less than a tag in its last chunk breaks it).
 * The header's MAC and the chunks' tags need the file key: an altered
 * byte, or almost any cut, is found only with an identity, or by the
 * archive's signature, which covers every byte.
 * With an identity, the archive is decrypted as a stream and its tar read
 * as it comes: each entry's type, size and sha256, and the bytes of the
 * manifest and its signature only, so nothing of the plaintext is written
 * anywhere or held whole; then the output inside is checked as a directory
 * is (src/verify).
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Decrypter, type Stanza } from 'age-encryption';
import { UsageError } from '../errors.js';
import { MANIFEST_OF } from '../manifests.js';
import { SIGNATURE_SUFFIX } from '../sign/manifest-signature.js';
import { escapeControl } from '../util/escape.js';
import { registerSecret } from '../util/redact.js';
import { hashedPieces } from '../util/safe-read.js';
import { decryptPayload } from './native-stream.js';
import { readKeyFile } from './recipients.js';
import { tarReader, TarProblem, type EntrySink, type TarHeader } from './untar.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';

const MAGIC = 'age-encryption.org/v1\n';
const CHUNK = 64 * 1024;
const TAG = 16;
const NONCE = 16;
/** The header of an archive this tool writes is a few hundred bytes a recipient; past this it is not one. */
const MAX_HEADER = 1024 * 1024;

/** An archive that could not be read as one: `problem` says which of not age, damaged, cut, altered or wrong identity. */
export class ArchiveProblem extends Error {}

/** The identities of an age identity file (age-keygen's format), or a usage error naming the file (and line); never their text. */
export function readIdentities(file: string, from: string): string[] {
  const text = readKeyFile(file, from, 'give an age identity file');
  const out: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    registerSecret(line);
    let ok = /^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]+$/.test(line);
    if (ok)
      try {
        new Decrypter().addIdentity(line);
      } catch {
        ok = false;
      }
    if (!ok)
      throw new UsageError(
        `line ${i + 1} of ${escapeControl(file)} (${from}) is not an age X25519 identity (AGE-SECRET-KEY-1…, as ` +
          'age-keygen writes it)',
      );
    out.push(line);
  });
  if (out.length === 0)
    throw new UsageError(`${escapeControl(file)} (${from}) holds no age identity; give the file age-keygen wrote`);
  return out;
}

/** The SHA-256 and SHA-512 of a file as it is read, for its signature. */
export interface Digests {
  readonly sha256: Buffer;
  readonly sha512: Buffer;
}

/** The hashes of an archive's bytes, fed as they are read. */
function digester(): { update(bytes: Uint8Array): void; digests(): Digests } {
  const sha256 = createHash('sha256');
  const sha512 = createHash('sha512');
  return {
    update(bytes) {
      sha256.update(bytes);
      sha512.update(bytes);
    },
    digests: () => ({ sha256: sha256.digest(), sha512: sha512.digest() }),
  };
}

/** The bytes of `file` from `from`, read a few MiB at a time into one buffer (each piece read before the next is asked for). */
function* piecesOf(file: string, from: number, hash?: ReturnType<typeof digester>): Generator<Buffer> {
  const fd = openSync(file, 'r');
  try {
    for (const piece of hashedPieces(fd, undefined, from, Infinity, Buffer.allocUnsafe(4 * 1024 * 1024))) {
      hash?.update(piece);
      yield piece;
    }
  } finally {
    closeSync(fd);
  }
}

function digestsOf(file: string): Digests {
  const hash = digester();
  for (const _ of piecesOf(file, 0, hash));
  return hash.digests();
}

/** The bytes of a chunk as a Buffer, not copied (Buffer.from of a Uint8Array copies it). */
function view(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * The plaintext of the archive given to `write` as it is decrypted: the
 * header by age-encryption (the file key unwrapped, the MAC checked), the
 * payload by Node's ChaCha20-Poly1305 (native-stream.ts) or, with that fast
 * path off, by age-encryption too. With `digests`, those of the archive's bytes.
 */
async function decryptInto(
  file: string,
  header: Buffer,
  identities: readonly string[],
  digests: boolean,
  native: boolean,
  write: (plain: Buffer) => void,
): Promise<Digests | undefined> {
  const decrypter = new Decrypter();
  for (const id of identities) decrypter.addIdentity(id);
  if (!native) {
    const source = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
    for await (const chunk of await decrypter.decrypt(source)) write(view(chunk));
    return digests ? digestsOf(file) : undefined;
  }
  const fileKey = await decrypter.decryptHeader(new Uint8Array(header));
  const hash = digests ? digester() : undefined;
  hash?.update(header);
  for (const plain of decryptPayload(fileKey, piecesOf(file, header.length, hash))) write(plain);
  return hash?.digests();
}

/** What a parse or decryption error of age-encryption means here; its own message may quote the file. */
function problemOf(err: unknown): ArchiveProblem {
  const m = err instanceof Error ? err.message : '';
  if (/no identity matched/.test(m))
    return new ArchiveProblem(
      'wrong identity: the archive is not encrypted to any identity of the file given (or its header was altered)',
    );
  if (/invalid header HMAC/.test(m))
    return new ArchiveProblem("altered: its header's MAC does not match (the header was changed after it was written)");
  if (/invalid tag|final chunk is empty|ciphertext/.test(m))
    return new ArchiveProblem(
      'altered or cut: a chunk of its payload does not authenticate (bytes changed, or the file ends on a chunk boundary)',
    );
  if (/invalid version/.test(m)) return new ArchiveProblem(`not an age file: it does not begin with "${MAGIC.trim()}"`);
  return new ArchiveProblem('damaged: its age header cannot be parsed');
}

/** The header's bytes (up to and with its MAC line), from the file's first bytes; or the problem. */
async function headerOf(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(MAX_HEADER);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    if (!head.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) {
      const armored = head.subarray(0, 34).toString('latin1') === '-----BEGIN AGE ENCRYPTED FILE-----';
      throw new ArchiveProblem(
        armored
          ? 'an ASCII-armored age file, which this tool does not write: decrypt it with age -d'
          : `not an age file: it does not begin with "${MAGIC.trim()}"`,
      );
    }
    const mac = head.indexOf('\n--- ');
    const end = mac < 0 ? -1 : head.indexOf('\n', mac + 1);
    if (end < 0)
      throw new ArchiveProblem(
        bytesRead < MAX_HEADER ? 'cut: it ends inside its age header' : 'damaged: its age header never ends',
      );
    return Buffer.from(head.subarray(0, end + 1));
  } finally {
    await handle.close();
  }
}

/** Whether a payload of `bytes` (after the header) is one STREAM can make: a nonce, full chunks, a last one not empty unless alone. */
function payloadSizeOk(bytes: number): boolean {
  const full = CHUNK + TAG;
  const rest = bytes - NONCE;
  if (rest < TAG) return false;
  const r = rest % full;
  return r === 0 || r > TAG || rest === TAG;
}

export interface Structure extends Digests {
  /** How many recipient stanzas the header holds. */
  readonly recipients: number;
  readonly bytes: number;
}

/** That the payload after a header of `header` bytes has a size STREAM can make; an ArchiveProblem naming a cut otherwise. */
async function checkPayloadSize(file: string, header: number): Promise<number> {
  const { size } = await stat(file);
  if (!payloadSizeOk(size - header))
    throw new ArchiveProblem(
      `cut: its payload of ${size - header} bytes is not a whole number of age chunks (the file ends inside one)`,
    );
  return size;
}

/** The checks that need no key (see the file's opening comment); an ArchiveProblem for a file that fails them. */
export async function checkStructure(file: string): Promise<Structure> {
  const header = await headerOf(file);
  let stanzas: readonly Stanza[] = [];
  const decrypter = new Decrypter();
  decrypter.addIdentity({
    unwrapFileKey(s: Stanza[]) {
      stanzas = s;
      return null;
    },
  });
  try {
    await decrypter.decrypt(new Uint8Array(header));
  } catch (err) {
    const problem = problemOf(err);
    if (!/wrong identity/.test(problem.message)) throw problem;
  }
  const bytes = await checkPayloadSize(file, header.length);
  return { recipients: stanzas.length, bytes, ...digestsOf(file) };
}

/** One entry of the tar inside, as the check needs it. */
export interface TarEntry {
  readonly type: TarHeader['type'];
  readonly size: number;
  readonly sha256?: string;
  /** The bytes of a manifest or its signature at the top of the output (the only ones kept). */
  readonly bytes?: Buffer;
}

/** The files kept whole out of the stream: the manifests and their signatures at the top of the output. */
const KEPT = new Set(Object.values(MANIFEST_OF).flatMap((m) => [m, `${m}${SIGNATURE_SUFFIX}`]));
/** A manifest or a signature past this is not one: hashed, not kept. */
const MAX_KEPT = 64 * 1024 * 1024;

/** An entry's name without `./` and trailing `/`, split at `/`; undefined for one that leaves the tree. */
function partsOf(name: string): string[] | undefined {
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  return parts.some((p) => p === '..') || name.startsWith('/') ? undefined : parts;
}

export interface Contents {
  /** The one directory at the top of the tar: the output's name. */
  readonly top: string;
  /** Every entry under it, by its path relative to it. */
  readonly entries: ReadonlyMap<string, TarEntry>;
}

/** A tar reader hashing each entry and keeping only the manifests and signatures; what it read once it ended. */
function contentsReader(): { tar: ReturnType<typeof tarReader>; contents(): Contents } {
  const entries = new Map<string, TarEntry>();
  const tops = new Set<string>();
  let outside = false;
  const tar = tarReader(({ name, type }) => {
    const parts = partsOf(name);
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let size = 0;
    const keep = parts?.length === 2 && KEPT.has(parts[1]!);
    return {
      data(piece) {
        hash.update(piece);
        size += piece.length;
        if (keep && size <= MAX_KEPT) kept.push(Buffer.from(piece));
      },
      end() {
        if (parts === undefined || parts.length === 0) {
          outside = true;
          return;
        }
        tops.add(parts[0]!);
        if (parts.length === 1) return;
        entries.set(parts.slice(1).join('/'), {
          type,
          size,
          ...(type === 'file' ? { sha256: hash.digest('hex') } : {}),
          ...(keep && size <= MAX_KEPT ? { bytes: Buffer.concat(kept) } : {}),
        });
      },
    };
  });
  return {
    tar,
    contents() {
      if (outside || tops.size !== 1)
        throw new ArchiveProblem(
          `not an archive of one output: its tar holds ${outside ? 'entries outside any directory' : `${tops.size} top directories`}`,
        );
      return { top: [...tops][0]!, entries };
    },
  };
}

/**
 * The archive decrypted with `identities` as a stream and its tar read
 * (see the file's opening comment), with the digests of its bytes as read;
 * an ArchiveProblem saying what was wrong.
 */
export async function readArchive(
  file: string,
  identities: readonly string[],
  digests: boolean,
  native = true,
): Promise<{ contents: Contents; digests: Digests | undefined }> {
  const head = await headerOf(file);
  const header = head.length;
  const size = await checkPayloadSize(file, header);
  const reader = contentsReader();
  let plain = 0;
  try {
    const sums = await decryptInto(file, head, identities, digests, native, (piece) => {
      plain += piece.length;
      reader.tar.write(piece);
    });
    reader.tar.end();
    return { contents: reader.contents(), digests: sums };
  } catch (err) {
    if (err instanceof ArchiveProblem) throw err;
    if (err instanceof TarProblem) throw new ArchiveProblem(err.message);
    const problem = problemOf(err);
    if (!/^altered or cut/.test(problem.message)) throw problem;
    // Which chunk failed, from the plaintext that came before it (a chunk or two may be in flight).
    const chunks = Math.ceil((size - header - NONCE) / (CHUNK + TAG));
    const failed = Math.floor(plain / CHUNK);
    throw new ArchiveProblem(
      failed >= chunks - 2
        ? 'cut or altered at its end: its last chunks do not authenticate (the file was cut short, or bytes near ' +
            'its end changed)'
        : `altered: chunk ${failed + 1} of ${chunks} does not authenticate (bytes changed after it was written)`,
    );
  }
}

/** Why an archive cannot be opened at all (missing, a directory), or undefined when it can. */
export async function archiveFileProblem(file: string): Promise<string | undefined> {
  const info = await stat(file).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error)
    return info.code === 'ENOENT' ? 'does not exist' : `cannot be read (${info.code ?? 'error'})`;
  if (!info.isFile()) return 'is not a regular file';
  return undefined;
}

/**
 * The restore drill of an archive (`verify --replay --identity`): the build
 * reads a raw collection from a directory, its large bodies from disk, so
 * the archive is decrypted into a private temporary directory (0700, files
 * 0600, only files and directories, names checked) that `use` reads and
 * that is removed afterwards, also on a signal. The one place plaintext
 * touches the disk (docs/decisions.md).
 */
export async function withExtracted<T>(
  file: string,
  identities: readonly string[],
  use: (dir: string) => Promise<T>,
): Promise<T> {
  const parent = await mkdtemp(path.join(tmpdir(), 'svc-snapshot-drill-'));
  registerStaging(parent);
  try {
    const header = await headerOf(file);
    await checkPayloadSize(file, header.length);
    let top: string | undefined;
    try {
      top = await extractInto(file, header, identities, parent);
    } catch (err) {
      if (err instanceof ArchiveProblem) throw err;
      if (err instanceof TarProblem) throw new ArchiveProblem(err.message);
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined)
        throw new ArchiveProblem(
          `could not be decrypted into ${parent} for the drill (${code}); free space there or set TMPDIR`,
        );
      throw problemOf(err);
    }
    return await use(path.join(parent, top));
  } finally {
    await rm(parent, { recursive: true, force: true });
    unregisterStaging(parent);
  }
}

const SKIPPED: EntrySink = { data() {}, end() {} };

/** Decrypts the archive and writes its tar's files and directories under `parent`; the one top directory's name. */
async function extractInto(
  file: string,
  header: Buffer,
  identities: readonly string[],
  parent: string,
): Promise<string> {
  const tops = new Set<string>();
  let fd: number | undefined;
  const entry = ({ name, type }: TarHeader): EntrySink => {
    const parts = partsOf(name);
    if (parts === undefined || parts.length === 0 || (type !== 'file' && type !== 'directory')) return SKIPPED;
    tops.add(parts[0]!);
    const target = path.join(parent, ...parts);
    if (type === 'directory') {
      mkdirSync(target, { recursive: true, mode: 0o700 });
      return SKIPPED;
    }
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const out = openSync(target, 'wx', 0o600);
    fd = out;
    return {
      data(piece) {
        for (let at = 0; at < piece.length;) at += writeSync(out, piece, at);
      },
      end() {
        fd = undefined;
        closeSync(out);
      },
    };
  };
  try {
    const tar = tarReader(entry);
    await decryptInto(file, header, identities, false, true, (piece) => tar.write(piece));
    tar.end();
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (tops.size !== 1) throw new ArchiveProblem('not an archive of one output: its tar holds no single top directory');
  return [...tops][0]!;
}
