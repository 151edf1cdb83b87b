/**
 * The report (CONTRACT section 16): `--format html` on a snapshot writes it
 * into the staging directory before the manifest, which lists it in its
 * `files`; `svc-snapshot report` writes it for a published snapshot.
 */
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
