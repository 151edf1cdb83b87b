/**
 * `history load --allowed-signers` (CONTRACT section 13): only snapshots
 * (or raw collections) whose manifest carries a signature by a key the file
 * lists are loaded; every one is checked before anything is stored, so one
 * that fails loads nothing (exit 1). The key's fingerprint goes into `runs`.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import { FailedError } from '../errors.js';
import type { AllowedSigners } from '../sign/allowed-signers.js';
import { manifestSignature } from '../sign/manifest-signature.js';
import type { SnapshotInput } from './input.js';
import { readRegularFile, shown } from './safe-read.js';

interface Verified {
  readonly key: string;
  /** The manifest's bytes as verified: what is loaded must be these. */
  readonly manifest: Buffer;
  readonly kind: 'snapshot' | 'collection';
}

/** Each directory's verified signature, or a FailedError naming the first that has none (nothing loaded). */
export async function requireSignatures(dirs: readonly string[], allowed: AllowedSigners, now: Date): Promise<Map<string, Verified>> {
  const out = new Map<string, Verified>();
  for (const dir of dirs) {
    // The manifest readInput loads: a snapshot's, else a raw collection's.
    const kind = (await lstat(path.join(dir, SNAPSHOT_MANIFEST)).catch(() => undefined)) ? 'snapshot' : 'collection';
    const name = kind === 'snapshot' ? SNAPSHOT_MANIFEST : COLLECTION_MANIFEST;
    const manifest = await readRegularFile(dir, name);
    const sig = await manifestSignature(dir, name, manifest, allowed, now);
    if (sig.state !== 'valid') {
      const why = sig.state === 'unsigned' ? `${name} is not signed (no ${name}.sig)` : sig.reason ?? sig.state;
      throw new FailedError(`${shown(dir)}: ${why}; with --allowed-signers only snapshots signed by a listed key are loaded, so nothing was loaded`);
    }
    out.set(dir, { key: sig.key!, manifest, kind });
  }
  return out;
}

/** The input with its signing key, once its manifest is known to be the one verified (not replaced since). */
export function withSigningKey(input: SnapshotInput, verified: Verified): SnapshotInput {
  if (verified.kind === 'snapshot' && input.manifestText !== verified.manifest.toString('utf8')) {
    throw new FailedError(`${shown(input.dir)}: ${SNAPSHOT_MANIFEST} changed after its signature was checked; it was not loaded`);
  }
  return { ...input, signingKey: verified.key };
}

