/**
 * `--encrypt-to`: after an output is published, `<dir>.tar.age` beside it,
 * the output's tar (tar.ts) encrypted in the age v1 format to every
 * recipient. Streamed: the tar is made as the encryption pulls it and the
 * ciphertext written as it comes, so neither the archive nor the plaintext
 * tar is ever whole in memory, and the plaintext never touches the disk.
 * Written under a temporary name (mode 0600) and renamed when complete, so
 * an archive of that name is replaced only by a whole new one; any failure
 * removes the temporary file and leaves the published output as it is.
 * With --sign-key, `<dir>.tar.age.sig` signs the archive's bytes as a
 * manifest is signed (SSHSIG, namespace svc-snapshot).
 */
import { createHash } from 'node:crypto';
import { lstatSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Encrypter } from 'age-encryption';
import { FailedError, UsageError } from '../errors.js';
import { leftoverName, removeDeadLeftovers } from '../publish/leftovers.js';
import { MANIFEST_OF, type OutputKind } from '../manifests.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';
import type { SigningKey } from '../sign/key.js';
import { signMessage } from '../sign/sshsig.js';
import type { Reporter } from '../progress/reporter.js';
import { escapeControl } from '../util/escape.js';
import { readManifestJson } from '../util/safe-read.js';
import { archiveOf, archiveSignatureOf } from './names.js';
import { readRecipients } from './recipients.js';
import { tarOf } from './tar.js';
import { encryptWithHeader } from './native-stream.js';

/** What --encrypt-to asks, read before anything is collected: the recipients, or the problem with them. */
export type ArchivePlan =
  | { readonly recipients: readonly string[]; readonly problem?: undefined }
  | { readonly problem: UsageError; readonly recipients?: undefined }
  | undefined;

/**
 * The recipients of --encrypt-to and SVC_ENCRYPT_TO_FILE, checked now;
 * undefined when neither is given. A bad one does not cost the night: it is
 * kept, said after the output is published, and the run ends with exit 2.
 */
export function planArchive(flag: readonly string[] | undefined, env: NodeJS.ProcessEnv): ArchivePlan {
  try {
    const recipients = readRecipients(flag, env);
    return recipients.length > 0 ? { recipients } : undefined;
  } catch (err) {
    if (err instanceof UsageError) return { problem: err };
    throw err;
  }
}

/** How many bytes of the archive are written at once. */
const WRITE_BATCH = 1024 * 1024;

/** The time the output's manifest records: every mtime of its tar. */
async function manifestTime(dir: string, kind: OutputKind): Promise<Date> {
  const read = await readManifestJson(dir, MANIFEST_OF[kind]);
  const time = 'json' in read ? (read.json as { time?: unknown }).time : undefined;
  const date = typeof time === 'string' ? new Date(time) : undefined;
  if (date === undefined || Number.isNaN(date.getTime()))
    throw new FailedError(`${MANIFEST_OF[kind]} in ${escapeControl(dir)} records no time to date the archive with`);
  return date;
}

/** A file written by temporary name beside `target` (mode 0600), renamed over it once whole; removed on any failure. */
async function writeAtomically(target: string, write: (handle: FileHandle) => Promise<void>) {
  const temp = path.join(path.dirname(target), leftoverName('temp', path.basename(target)));
  // A signal while it is written removes it (src/publish/registry.ts).
  registerStaging(temp);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await write(handle);
      await handle.sync();
    } finally {
      await handle.close();
    }
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  } finally {
    unregisterStaging(temp);
  }
}

/**
 * `plain` encrypted to `recipients` as an age file, streamed: by
 * age-encryption, or with the `nativeStream` fast path its payload sealed
 * by Node's ChaCha20-Poly1305 (native-stream.ts).
 */
export async function encryptTo(
  recipients: readonly string[],
  plain: ReadableStream<Uint8Array>,
  native = true,
): Promise<ReadableStream<Uint8Array>> {
  if (native) return encryptWithHeader(recipients, plain);
  const encrypter = new Encrypter();
  for (const r of recipients) encrypter.addRecipient(r);
  return encrypter.encrypt(plain);
}

/** Every byte of `chunks` written: a write may write fewer (a disk filling up), and the next one then says why. */
async function writeAll(handle: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let buffer = Buffer.concat(chunks);
  while (buffer.length > 0) {
    const { bytesWritten } = await handle.write(buffer);
    buffer = buffer.subarray(bytesWritten);
  }
}

/** The archive's bytes into `handle`, hashed (SHA-512, for its signature) as they are written. */
async function encryptInto(
  handle: FileHandle,
  dir: string,
  mtime: Date,
  recipients: readonly string[],
): Promise<Buffer> {
  const hash = createHash('sha512');
  // Written a MiB at a time: one write a 64 KiB chunk waits on the disk some 16 times as often.
  let batch: Uint8Array[] = [];
  let batched = 0;
  for await (const chunk of await encryptTo(recipients, tarOf(dir, mtime))) {
    hash.update(chunk);
    batch.push(chunk);
    batched += chunk.length;
    if (batched < WRITE_BATCH) continue;
    await writeAll(handle, batch);
    batch = [];
    batched = 0;
  }
  await writeAll(handle, batch);
  return hash.digest();
}

/** Why the archive could not be written, and that the output stays. */
function failure(err: unknown, archive: string, outDir: string): FailedError {
  const e = err as NodeJS.ErrnoException;
  const why =
    e.code === 'ENOSPC' || e.code === 'EDQUOT'
      ? `no space is left on the device (${e.code}): free some space there and run again`
      : err instanceof FailedError
        ? err.message
        : `${e.code ?? 'error'}${e.message ? `: ${escapeControl(e.message)}` : ''}`;
  return new FailedError(
    `the output was published to ${escapeControl(outDir)}, but its archive ${escapeControl(archive)} could not be ` +
      `written (${why}); no partial archive was left`,
    { cause: err },
  );
}

/**
 * After a publish: nothing without --encrypt-to; the problem with the
 * recipients (exit 2) when there was one; else `<outDir>.tar.age` (and its
 * `.sig` with a key) written, or a FailedError (exit 1) saying why not.
 */
export async function writeArchive(
  plan: ArchivePlan,
  outDir: string,
  kind: OutputKind,
  signKey: SigningKey | undefined,
  reporter: Reporter,
  debug = false,
): Promise<string | undefined> {
  if (plan === undefined) return undefined;
  if (plan.problem)
    throw new UsageError(`${plan.problem.message}. The output was published to ${outDir}, without its archive`);
  const archive = archiveOf(outDir);
  // What a run killed while writing this archive left beside it (its pid no running process).
  const ours = new Set([path.basename(archive), path.basename(archiveSignatureOf(archive))]);
  for (const line of removeDeadLeftovers(
    'temp',
    path.dirname(archive),
    (b) => ours.has(b),
    'left by a run that was killed',
  ))
    reporter.warn(line);
  reporter.info(`encrypting ${archive} to ${plan.recipients.length} recipient${plan.recipients.length > 1 ? 's' : ''}`);
  if (debug) for (const r of plan.recipients) reporter.info(`  recipient ${r}`);
  try {
    const mtime = await manifestTime(outDir, kind);
    let digest: Buffer = Buffer.alloc(0);
    await writeAtomically(archive, async (handle) => {
      digest = await encryptInto(handle, outDir, mtime, plan.recipients);
    });
    const sig = archiveSignatureOf(archive);
    // A signature of the archive this one replaced would no longer match it: gone unless a new one takes its place.
    const stale = () => {
      if (lstatSync(sig, { throwIfNoEntry: false })?.isFile()) unlinkSync(sig);
    };
    if (signKey === undefined) stale();
    else
      await writeAtomically(sig, async (handle) => {
        await handle.write(signMessage({ sha512: digest }, signKey));
      }).catch((err: unknown) => {
        stale();
        throw err;
      });
  } catch (err) {
    throw failure(err, archive, outDir);
  }
  return archive;
}
