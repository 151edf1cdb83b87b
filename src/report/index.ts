/**
 * The report (README.md, "The report"): `--format html` on a snapshot writes it
 * into the staging directory before the manifest, which lists it in its
 * `files`; `svc-snapshot report` writes it for a published snapshot.
 */
import path from 'node:path';
import type { ChangeSet } from '../diff/index.js';
import { reportFileName, type SnapshotManifest } from '../manifests.js';
import type { FindingsReport } from '../findings/evaluate.js';
import { modelOfStaging, type StagingOptions } from './gather.js';
import { renderReport } from './render.js';
import type { ReportModel } from './model.js';

export { modelOfDirectory, nightsOfStaging } from './gather.js';
export type { HistorySource } from '../history/previous-findings.js';
export { renderReport } from './render.js';

interface ReportStaging {
  readonly dir: string;
  writeFile(relPath: string, data: string | Uint8Array): Promise<void>;
}

/**
 * `--format html`: the page's model gathered from the staging directory (the
 * comparison with the previous snapshot, and the findings told against that
 * night's), and `write`, which writes the page into staging. `write` returns
 * the page's file name, for the manifest's `files`, and the comparison the
 * page shows, so that --diff-previous need not make it again.
 */
export async function stagingReport(
  staging: ReportStaging,
  manifest: SnapshotManifest,
  opts: StagingOptions,
): Promise<{
  findings: FindingsReport;
  write: () => Promise<{ name: string; previous?: { dir: string; changes: ChangeSet } }>;
}> {
  const name = reportFileName(manifest.date);
  const model = {
    ...(await modelOfStaging(staging.dir, manifest, opts)),
    ...(opts.rerun ? { rerun: opts.rerun } : {}),
  };
  const previous = comparedBeside(opts.outDir, model.previous);
  const write = async () => {
    await staging.writeFile(name, renderReport(model));
    return { name, ...(previous ? { previous } : {}) };
  };
  return { findings: model.findings.report, write };
}

/** The comparison made in staging, as --diff-previous takes it: the previous snapshot is found beside the output directory. */
export function comparedBeside(
  outDir: string,
  previous: ReportModel['previous'],
): { dir: string; changes: ChangeSet } | undefined {
  return 'changes' in previous
    ? { dir: path.join(path.dirname(outDir), previous.name), changes: previous.changes }
    : undefined;
}
