/**
 * The report (CONTRACT section 16): `--format html` on a snapshot writes it
 * into the staging directory before the manifest, which lists it in its
 * `files`; `svc-snapshot report` writes it for a published snapshot.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SnapshotManifest } from '../exports/manifest.js';
import { modelOfStaging, type StagingOptions } from './gather.js';
import { renderReport } from './render.js';

export { modelOfDirectory, type HistorySource } from './gather.js';
export { renderReport } from './render.js';

/** The report's file name in a snapshot of that date. */
export function reportFileName(date: string): string {
  return `svc-snapshot-${date}.html`;
}

interface ReportStaging {
  readonly dir: string;
  writeFile(relPath: string, data: string | Uint8Array): Promise<void>;
}

/** `--format html`: the page written into the staging directory; returns its file name, for the manifest's `files`. */
export async function writeStagingReport(staging: ReportStaging, manifest: SnapshotManifest, opts: StagingOptions): Promise<string> {
  const name = reportFileName(manifest.date);
  await staging.writeFile(name, renderReport(await modelOfStaging(staging.dir, manifest, opts)));
  return name;
}

/** Writes `path` (mode 0600) under a temporary name beside it, then renames it: a reader never sees half a page. */
export async function writeFileAtomically(path: string, content: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
