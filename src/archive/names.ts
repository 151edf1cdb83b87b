/**
 * The names of an output's archive beside it: `<dir>.tar.age`, and with
 * --sign-key its signature `<dir>.tar.age.sig`. Here, below the readers and
 * the retention that deletes them with their directory.
 */
import { lstatSync, unlinkSync } from 'node:fs';
import { SIGNATURE_SUFFIX } from '../sign/manifest-signature.js';

const ARCHIVE_SUFFIX = '.tar.age';

/** The archive of the output directory `dir` (an absolute path). */
export function archiveOf(dir: string): string {
  return `${dir.replace(/\/+$/, '')}${ARCHIVE_SUFFIX}`;
}

/** The signature of an archive. */
export function archiveSignatureOf(archive: string): string {
  return `${archive}${SIGNATURE_SUFFIX}`;
}

/**
 * Deletes the archive of `dir` and its signature where they are regular
 * files (a link or anything else of that name is left alone); the paths
 * deleted. Throws what the file system says for one that cannot be.
 */
export function removeArchiveOf(dir: string): string[] {
  const removed: string[] = [];
  for (const file of [archiveOf(dir), archiveSignatureOf(archiveOf(dir))]) {
    if (!lstatSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    unlinkSync(file);
    removed.push(file);
  }
  return removed;
}
