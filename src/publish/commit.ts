import { randomBytes } from 'node:crypto';
import { lstatSync, renameSync, rmSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { FailedError } from '../cli/errors.js';
import { isLiveStaging, registerBackup, unregisterBackup, unregisterStaging } from './registry.js';
import { assertNoSecrets, listTree, secretNeedles } from './scan.js';
import { createStaging, DIR_MODE, FILE_MODE, targetParts, type Staging } from './staging.js';

/**
 * Checks the staging directory for every form of every secret, fixes modes,
 * then renames it into place (CONTRACT section 6). On any failure the staging
 * directory is removed and the previous target, if any, is left as it was.
 */
export async function commit(staging: Staging, targetDir: string, secrets: readonly string[]): Promise<void> {
  const { target, parent, base } = targetParts(targetDir);
  if (!isLiveStaging(staging.dir)) {
    throw new Error(`staging directory ${staging.dir} was already published or discarded`);
  }
  if (path.dirname(staging.dir) !== parent) {
    staging.discard();
    throw new Error(`staging directory ${staging.dir} is not beside ${target}`);
  }
  try {
    const tree = await listTree(staging.dir);
    await assertNoSecrets(staging.dir, tree, secretNeedles(secrets));
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
  publishSync(staging, target, parent, base);
}

function publishSync(staging: Staging, target: string, parent: string, base: string): void {
  let existing: ReturnType<typeof lstatSync> | undefined;
  try {
    existing = lstatSync(target, { throwIfNoEntry: false });
    if (existing && !existing.isDirectory()) {
      throw new FailedError(`${target} exists and is not a directory; nothing was published. Remove it or choose another output directory`);
    }
    if (!existing) {
      renameSync(staging.dir, target);
      unregisterStaging(staging.dir);
      return;
    }
  } catch (err) {
    staging.discard();
    throw wrap(err, target);
  }

  const backup = path.join(parent, `.${base}.previous-${process.pid}-${randomBytes(4).toString('hex')}`);
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
    unregisterBackup(backup);
  } catch (err) {
    unregisterBackup(backup);
    throw new FailedError(
      `${target} was published, but its previous contents could not be removed from ${backup}; remove that directory by hand`,
      { cause: err },
    );
  }
}

function wrap(err: unknown, target: string): unknown {
  if (err instanceof FailedError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new FailedError(`could not publish ${target}: ${reason}; nothing was published`, { cause: err });
}

/**
 * Creates a staging directory for `targetDir`, lets `fill` write into it,
 * then commits it. Any error (from `fill` or the commit) removes the staging
 * directory and is rethrown.
 */
export async function withStaging<T>(
  targetDir: string,
  secrets: readonly string[],
  fill: (staging: Staging) => Promise<T>,
): Promise<T> {
  const staging = await createStaging(targetDir);
  try {
    const result = await fill(staging);
    await commit(staging, targetDir, secrets);
    return result;
  } catch (err) {
    staging.discard();
    throw err;
  }
}
