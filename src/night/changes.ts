/** The changes between tonight and the night before, as --diff-previous and the digest show them. */
import path from 'node:path';
import { diffDirectories, type ChangeSet } from '../diff/index.js';
import type { PreviousBeside } from '../snapshot/beside.js';
import type { SnapshotManifest } from '../manifests.js';
import type { SnapshotOutcome } from '../summaries/snapshot.js';
import type { Reporter } from '../progress/reporter.js';
import { readableNames } from '../diff/names.js';

/**
 * --diff-previous: the snapshot is published either way, so a diff that cannot be made is reported, not fatal.
 * The previous snapshot is the newest older one of the same site: a newer one of another site passed over is said.
 */
export async function diffWithPrevious(
  { outDir, manifest, beside }: { outDir: string; manifest: SnapshotManifest; beside: PreviousBeside },
  reporter: Reporter | undefined,
  shown?: { dir: string; changes: ChangeSet },
): Promise<NonNullable<SnapshotOutcome['previous']>> {
  const dir = beside.dir ?? null;
  const other = beside.otherSite && `${path.basename(beside.otherSite.dir)}, is of ${beside.otherSite.baseUrl}`;
  if (!dir) {
    reporter?.warn(
      other
        ? `--diff-previous: no older snapshot of ${manifest.baseUrl} beside ${outDir} (the newest older one, ${other})`
        : `--diff-previous: no older snapshot of ${manifest.baseUrl} beside ${outDir}`,
    );
    return { dir };
  }
  if (other)
    reporter?.info(`--diff-previous: the newest older snapshot beside, ${other}; compared with ${dir} instead`);
  // --format html compared the same two snapshots for its page (the same options): not again.
  if (shown && path.resolve(shown.dir) === path.resolve(dir)) return { dir, changes: shown.changes };
  try {
    return { dir, changes: await diffDirectories(dir, outDir) };
  } catch (err) {
    reporter?.warn(`--diff-previous: could not compare with ${dir}: ${(err as Error).message}`);
    return { dir };
  }
}

/** The changes as `--diff-previous` prints them for a person: users and teams by the names the two nights hold. */
export async function namedForText(
  previous: NonNullable<SnapshotOutcome['previous']>,
  outDir: string,
): Promise<NonNullable<SnapshotOutcome['previous']>> {
  if (!previous.changes || previous.dir === null) return previous;
  return { ...previous, names: await readableNames([outDir, previous.dir]) };
}
