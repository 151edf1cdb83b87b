/**
 * A manifest's signature (docs/verify.md): `<manifest>.sig` beside it,
 * the SSHSIG of the manifest's exact bytes in the namespace `svc-snapshot`.
 * Written into the staging directory right after the manifest, so that it
 * is published (and scanned) with the output; read back by `verify` and
 * `history load --allowed-signers`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeControl } from '../util/escape.js';
import type { SignatureStateName } from './states.js';

/** Where the manifest was written: the staging directory (publish/staging.ts), seen through what signing needs of it. */
interface Staging {
  readonly dir: string;
  writeFile(relPath: string, data: string | Uint8Array): Promise<void>;
}
import { UnreadableEntryError, withFileInside } from '../util/safe-read.js';
import { findSigner, type AllowedSigners } from './allowed-signers.js';
import type { SigningKey } from './key.js';
import { MAX_SIGNATURE_BYTES, SIGNATURE_NAMESPACE, checkSignature, signMessage, type Signed } from './sshsig.js';

export const SIGNATURE_SUFFIX = '.sig';

/** Signs the manifest just written into the staging directory (nothing without a key): its bytes as they are on disk. */
export async function signManifest(staging: Staging, manifestName: string, key: SigningKey | undefined): Promise<void> {
  if (key === undefined) return;
  const bytes = await readFile(path.join(staging.dir, manifestName));
  await staging.writeFile(`${manifestName}${SIGNATURE_SUFFIX}`, signMessage(bytes, key));
}

/** What `verify` reports of a signature; `key` is the signing key's fingerprint when the signature could be read. */
export interface SignatureState {
  readonly state: SignatureStateName;
  readonly key: string | null;
  /** Why it is not valid, or the principals that allow it. */
  readonly reason?: string;
}

/**
 * The signature of `manifestName` in `dir` over `manifest` (its bytes as
 * read): `unsigned` without a `.sig`; with `allowed`, `valid` only when the
 * signing key is listed for the namespace at `now`. The `.sig` is read like
 * any file of an output (a regular file inside `dir`, never through a link),
 * and never more than MAX_SIGNATURE_BYTES of it.
 */
export async function manifestSignature(
  dir: string,
  manifestName: string,
  manifest: Buffer,
  allowed: AllowedSigners | undefined,
  now: Date,
): Promise<SignatureState> {
  const sigName = `${manifestName}${SIGNATURE_SUFFIX}`;
  return signatureState(sigName, await readSignatureFile(dir, sigName), manifest, allowed, now);
}

/** A signature file read, or that there is none, or why it could not be read. */
export type SignatureFile = { readonly bytes: Buffer } | { readonly missing: true } | { readonly unreadable: string };

/** `name` in `dir` read as any file of an output (a regular file inside, never through a link), at most MAX_SIGNATURE_BYTES + 1. */
export async function readSignatureFile(dir: string, name: string): Promise<SignatureFile> {
  try {
    return {
      bytes: await withFileInside(dir, name, async (handle, size) => {
        const buf = Buffer.alloc(Math.min(size, MAX_SIGNATURE_BYTES + 1));
        const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
        return size > MAX_SIGNATURE_BYTES ? Buffer.alloc(MAX_SIGNATURE_BYTES + 1) : buf.subarray(0, bytesRead);
      }),
    };
  } catch (err) {
    if (err instanceof UnreadableEntryError && /does not exist/.test(err.problem)) return { missing: true };
    if (err instanceof UnreadableEntryError) return { unreadable: err.problem };
    throw err;
  }
}

/** What a signature file read says over `message`: unsigned without one, invalid when it could not be read. */
export function signatureState(
  sigName: string,
  file: SignatureFile,
  message: Signed,
  allowed: AllowedSigners | undefined,
  now: Date,
): SignatureState {
  if ('missing' in file) return { state: 'unsigned', key: null };
  if ('unreadable' in file) return { state: 'invalid', key: null, reason: `${sigName} ${file.unreadable}` };
  return signatureOf(sigName, file.bytes, message, allowed, now);
}

/**
 * The state of the signature `sig` (the bytes of the file `sigName`) over
 * `message`: what manifestSignature says of a `.sig` once read, for a
 * signature read from elsewhere (an archive's, or one inside an archive).
 */
function signatureOf(
  sigName: string,
  sig: Buffer,
  message: Signed,
  allowed: AllowedSigners | undefined,
  now: Date,
): SignatureState {
  const check = checkSignature(sig, message, SIGNATURE_NAMESPACE);
  if (!check.valid) return { state: 'invalid', key: check.fingerprint, reason: `${sigName} ${check.reason}` };
  if (allowed === undefined) return { state: 'valid', key: check.fingerprint };
  const signer = findSigner(allowed, check.publicBlob, SIGNATURE_NAMESPACE, now);
  if (!signer.ok)
    return {
      state: 'not allowed',
      key: check.fingerprint,
      reason: `${sigName} is a valid signature, but ${signer.reason}`,
    };
  return {
    state: 'valid',
    key: check.fingerprint,
    reason: `allowed signer ${escapeControl(signer.principals)}, line ${signer.line} of ${escapeControl(allowed.file)}`,
  };
}
