import { lstatSync, renameSync, rmSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { DomainError, FailedError } from '../errors.js';
import { describeFsError } from '../util/fs-error.js';
import { notePublished, registerBackup, unregisterBackup, unregisterStaging } from './registry.js';
import { assertNoSecrets, listTree, secretMatcher } from './scan.js';
import { leftoverName } from './leftovers.js';
import { recoverStale } from './stale.js';
import { assertLive, createStaging, DIR_MODE, FILE_MODE, fileIdentity, targetParts, type Staging } from './staging.js';
import { assertReplaceable, assertSafeTarget, type OutputKind } from './target.js';

/**
 * Checks the staging directory for every form of every secret, fixes modes,
 * then renames it into place (README.md, "Output"). On any failure the staging
 * directory is removed and the previous target, if any, is left as it was.
 */
export async function commit(
  staging: Staging,
  targetDir: string,
  secrets: readonly string[],
  kind?: OutputKind,
): Promise<void> {
  const { target, parent } = targetParts(targetDir);
  assertLive(staging.dir);
  if (path.dirname(staging.dir) !== parent) {
    staging.discard();
    throw new Error(`staging directory ${staging.dir} is not beside ${target}`);
  }
  try {
    const tree = await listTree(staging.dir);
    await assertNoSecrets(staging.dir, tree, secretMatcher(secrets), stillSearched(staging, secrets));
    // Explicit modes: the umask, or whoever wrote into the directory, must not matter.
    await chmod(staging.dir, DIR_MODE);
    for (const rel of tree.dirs) await chmod(path.join(staging.dir, rel), DIR_MODE);
    for (const rel of tree.files) await chmod(path.join(staging.dir, rel), FILE_MODE);
  } catch (err) {
    staging.discard();
    throw err;
  }
  // From here on everything is synchronous: a signal handler runs between
  // event-loop tasks, so it sees either the old target or the new one.
  publishSync(staging, target, kind);
}

/**
 * The files whose every byte the staging searched as it wrote them, for the
 * same secrets, and that are still the files written (size, modification
 * time, inode): the pre-publish scan need not read them back. Anything else
 * (written another way, changed since, other secrets) is read and searched
 * as before.
 */
function stillSearched(staging: Staging, secrets: readonly string[]): Set<string> {
  const same = staging.secrets.length === secrets.length && staging.secrets.every((s, i) => s === secrets[i]);
  const out = new Set<string>();
  if (!same) return out;
  for (const [rel, identity] of staging.searched)
    if (identity !== '' && fileIdentity(path.join(staging.dir, rel)) === identity) out.add(rel);
  return out;
}

function publishSync(staging: Staging, target: string, kind: OutputKind | undefined): void {
  try {
    // Checked again here, just before the rename: what is replaced must be the tool's own output.
    assertSafeTarget(target, process.cwd());
    assertReplaceable(target, kind);
    if (!lstatSync(target, { throwIfNoEntry: false })) {
      renameSync(staging.dir, target);
      unregisterStaging(staging.dir);
      notePublished(target);
      return;
    }
  } catch (err) {
    staging.discard();
    throw wrap(err, target);
  }

  const { parent, base } = targetParts(target);
  const backup = path.join(parent, leftoverName('previous', base));
  registerBackup(backup, target);
  try {
    renameSync(target, backup);
  } catch (err) {
    unregisterBackup(backup);
    staging.discard();
    throw wrap(err, target);
  }
  try {
    renameSync(staging.dir, target);
    unregisterStaging(staging.dir);
    notePublished(target);
  } catch (err) {
    try {
      renameSync(backup, target);
      unregisterBackup(backup);
    } catch {
      // Left registered: `cleanupAllSync` tries again when the process exits.
    }
    staging.discard();
    throw wrap(err, target);
  }
  try {
    rmSync(backup, { recursive: true, force: true });
  } catch (err) {
    throw new FailedError(
      `${target} was published, but its previous contents could not be removed from ${backup}; remove that directory by hand`,
      { cause: err },
    );
  } finally {
    unregisterBackup(backup);
  }
}

function wrap(err: unknown, target: string): unknown {
  if (err instanceof DomainError) return err;
  const fs = describeFsError(err, target);
  if (fs) return new FailedError(`could not publish ${target}: ${fs}`, { cause: err });
  const reason = err instanceof Error ? err.message : String(err);
  return new FailedError(`could not publish ${target}: ${reason}; nothing was published`, { cause: err });
}

/**
 * Creates a staging directory for `targetDir`, lets `fill` write into it,
 * then commits it. Any error (from `fill` or the commit) removes the staging
 * directory and is rethrown. `kind` names the earlier output that may be
 * replaced (README.md, "Output"); without it only a missing or empty
 * directory is.
 */
export async function withStaging<T>(
  targetDir: string,
  secrets: readonly string[],
  fill: (staging: Staging) => Promise<T>,
  kind?: OutputKind,
  warn: (message: string) => void = () => {},
): Promise<T> {
  // Refused before any work: the same checks run again just before the rename.
  assertSafeTarget(targetDir, process.cwd());
  for (const line of recoverStale(targetDir)) warn(line);
  assertReplaceable(targetDir, kind);
  const staging = await createStaging(targetDir, secrets);
  try {
    const result = await fill(staging);
    await commit(staging, targetDir, secrets, kind);
    return result;
  } catch (err) {
    staging.discard();
    throw err;
  }
}
