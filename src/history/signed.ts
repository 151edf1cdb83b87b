/**
 * `history load --allowed-signers` (docs/verify.md): only snapshots
 * (or raw collections) whose manifest carries a signature by a key the file
 * lists are loaded; every one is checked before anything is stored, so one
 * that fails loads nothing (exit 1). The key's fingerprint goes into `runs`.
 */
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { FailedError } from '../errors.js';
import type { AllowedSigners } from '../sign/allowed-signers.js';
import { manifestSignature } from '../sign/manifest-signature.js';
import { shown, SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import { readInside } from '../util/safe-read.js';
import type { InputHead } from './input.js';

/**
 * Each directory's verified signature (the key's fingerprint), or a
 * FailedError naming the first that has none (nothing loaded). A snapshot's
 * manifest is the one its opening read, so what is loaded is what was
 * verified.
 */
export async function requireSignatures(
  heads: readonly InputHead[],
  allowed: AllowedSigners,
  now: Date,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const { dir, snapshot } of heads) {
    const name = snapshot ? SNAPSHOT_MANIFEST : COLLECTION_MANIFEST;
    const manifest =
      snapshot?.manifestBytes ??
      (await readInside(dir, name).catch((err: Error) => {
        throw new FailedError(`${err.message}; nothing was loaded`, { cause: err });
      }));
    const sig = await manifestSignature(dir, name, manifest, allowed, now);
    if (sig.state !== 'valid') {
      const why = sig.state === 'unsigned' ? `${name} is not signed (no ${name}.sig)` : (sig.reason ?? sig.state);
      throw new FailedError(
        `${shown(dir)}: ${why}; with --allowed-signers only snapshots signed by a listed key are loaded, so nothing was loaded`,
      );
    }
    out.set(dir, sig.key!);
  }
  return out;
}
