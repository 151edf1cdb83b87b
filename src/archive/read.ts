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
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Decrypter, type Stanza } from 'age-encryption';
import tar from 'tar-stream';
import { UsageError } from '../errors.js';
import { MANIFEST_OF } from '../manifests.js';
import { SIGNATURE_SUFFIX } from '../sign/manifest-signature.js';
import { escapeControl } from '../util/escape.js';
import { registerSecret } from '../util/redact.js';
import { decryptPayload } from './native-stream.js';
import { drained } from './tar.js';
import { readKeyFile } from './recipients.js';
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

/**
 * The archive's bytes from `start` as a Web stream, read a buffer at a time;
 * with `hashed` (the bytes before `start`), the digests of the whole file
 * once all are read (undefined without).
 */
function bytesOf(
  file: string,
  start = 0,
  hashed?: Buffer,
): { stream: ReadableStream<Uint8Array>; digests: Promise<Digests> | undefined } {
  const source = createReadStream(file, { highWaterMark: 256 * 1024, start });
  if (hashed === undefined) return { stream: Readable.toWeb(source) as ReadableStream<Uint8Array>, digests: undefined };
  const sha256 = createHash('sha256').update(hashed);
  const sha512 = createHash('sha512').update(hashed);
  source.on('data', (chunk) => {
    sha256.update(chunk as Buffer);
    sha512.update(chunk as Buffer);
  });
  const digests = new Promise<Digests>((resolve, reject) => {
    source.on('end', () => resolve({ sha256: sha256.digest(), sha512: sha512.digest() }));
    source.on('error', reject);
  });
  digests.catch(() => {});
  return { stream: Readable.toWeb(source) as ReadableStream<Uint8Array>, digests };
}

/**
 * The plaintext of the archive, decrypted as it is read: the header by
 * age-encryption (the file key unwrapped, the MAC checked), the payload by
 * Node's ChaCha20-Poly1305 (native-stream.ts) or, with that fast path off,
 * by age-encryption too. With `digests`, those of the archive's bytes as read.
 */
async function decrypted(
  file: string,
  header: Buffer,
  identities: readonly string[],
  digests: boolean,
  native: boolean,
): Promise<{ plain: ReadableStream<Uint8Array>; digests: Promise<Digests> | undefined }> {
  const decrypter = new Decrypter();
  for (const id of identities) decrypter.addIdentity(id);
  if (!native) {
    const source = bytesOf(file, 0, digests ? Buffer.alloc(0) : undefined);
    return { plain: await decrypter.decrypt(source.stream), digests: source.digests };
  }
  const fileKey = await decrypter.decryptHeader(new Uint8Array(header));
  const source = bytesOf(file, header.length, digests ? header : undefined);
  return { plain: decryptPayload(fileKey, source.stream), digests: source.digests };
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
  const whole = bytesOf(file, 0, Buffer.alloc(0));
  for await (const _ of whole.stream);
  return { recipients: stanzas.length, bytes, ...(await whole.digests!) };
}

/** One entry of the tar inside, as the check needs it. */
export interface TarEntry {
  readonly type: 'file' | 'directory' | 'symbolic link' | 'other';
  readonly size: number;
  readonly sha256?: string;
  /** The bytes of a manifest or its signature at the top of the output (the only ones kept). */
  readonly bytes?: Buffer;
}

/** The files kept whole out of the stream: the manifests and their signatures at the top of the output. */
const KEPT = new Set(Object.values(MANIFEST_OF).flatMap((m) => [m, `${m}${SIGNATURE_SUFFIX}`]));
/** A manifest or a signature past this is not one: hashed, not kept. */
const MAX_KEPT = 64 * 1024 * 1024;

function typeOfHeader(type: string | null | undefined): TarEntry['type'] {
  if (type === 'file' || type === 'contiguous-file') return 'file';
  if (type === 'directory') return 'directory';
  if (type === 'symlink') return 'symbolic link';
  return 'other';
}

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

/** The bytes of a chunk as a Buffer, not copied (Buffer.from of a Uint8Array copies it). */
function view(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The tar entries of a plaintext stream: hashed as they come, only the manifest and its signature kept. */
async function readTar(plain: ReadableStream<Uint8Array>): Promise<Contents> {
  const extract = tar.extract();
  const feeding = feed(plain, extract);
  const entries = new Map<string, TarEntry>();
  const tops = new Set<string>();
  let outside = false;
  for await (const entry of extract) {
    const parts = partsOf(entry.header.name);
    const type = typeOfHeader(entry.header.type);
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let size = 0;
    const rel = parts?.slice(1).join('/') ?? '';
    const keep = parts?.length === 2 && KEPT.has(parts[1]!);
    for await (const chunk of entry) {
      const b = chunk as Buffer;
      hash.update(b);
      size += b.length;
      if (keep && size <= MAX_KEPT) kept.push(b);
    }
    if (parts === undefined || parts.length === 0) {
      outside = true;
      continue;
    }
    tops.add(parts[0]!);
    if (parts.length === 1) continue;
    entries.set(rel, {
      type,
      size,
      ...(type === 'file' ? { sha256: hash.digest('hex') } : {}),
      ...(keep && size <= MAX_KEPT ? { bytes: Buffer.concat(kept) } : {}),
    });
  }
  await feeding;
  if (outside || tops.size !== 1)
    throw new ArchiveProblem(
      `not an archive of one output: its tar holds ${outside ? 'entries outside any directory' : `${tops.size} top directories`}`,
    );
  return { top: [...tops][0]!, entries };
}

/** A tar parser fed the plaintext as it is read, waiting when it is full; a failed read destroys it. */
async function feed(plain: ReadableStream<Uint8Array>, extract: ReturnType<typeof tar.extract>): Promise<void> {
  try {
    for await (const chunk of plain) if (!extract.write(view(chunk))) await drained(extract);
    extract.end(undefined);
  } catch (err) {
    extract.destroy(err as Error);
  }
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
  let plain = 0;
  const counted = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      plain += chunk.length;
      controller.enqueue(chunk);
    },
  });
  try {
    const source = await decrypted(file, head, identities, digests, native);
    const contents = await readTar(source.plain.pipeThrough(counted));
    return { contents, digests: await source.digests };
  } catch (err) {
    if (err instanceof ArchiveProblem) throw err;
    const m = err instanceof Error ? err.message : '';
    // tar-stream's own words for a tar that ends early or is not one.
    if (/unexpected end|premature/i.test(m))
      throw new ArchiveProblem('cut: the tar inside ends early (the archive was cut on a chunk boundary)');
    if (/invalid tar header|checksum/i.test(m))
      throw new ArchiveProblem('not an archive of an output: what age decrypts is not a tar');
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
      top = await extractInto((await decrypted(file, header, identities, false, true)).plain, parent);
    } catch (err) {
      if (err instanceof ArchiveProblem) throw err;
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

/** Writes the tar's files and directories under `parent`; the one top directory's name. */
async function extractInto(plain: ReadableStream<Uint8Array>, parent: string): Promise<string> {
  const extract = tar.extract();
  const feeding = feed(plain, extract);
  const tops = new Set<string>();
  for await (const entry of extract) {
    const parts = partsOf(entry.header.name);
    const type = typeOfHeader(entry.header.type);
    if (parts === undefined || parts.length === 0 || (type !== 'file' && type !== 'directory')) {
      for await (const _ of entry);
      continue;
    }
    tops.add(parts[0]!);
    const target = path.join(parent, ...parts);
    if (type === 'directory') {
      await mkdir(target, { recursive: true, mode: 0o700 });
      for await (const _ of entry);
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const out = await open(target, 'wx', 0o600);
    try {
      for await (const chunk of entry) await out.write(chunk as Buffer);
    } finally {
      await out.close();
    }
  }
  await feeding;
  if (tops.size !== 1) throw new ArchiveProblem('not an archive of one output: its tar holds no single top directory');
  return [...tops][0]!;
}
