import type { ChangeSet } from '../diff/types.js';
import type { RunNotice } from './digest.js';
import type { FindingsIn } from '../findings/file.js';
import type { Rerun } from '../snapshot/beside.js';

/** What a snapshot's notice reads of its manifest. */
interface NoticeManifest {
  readonly baseUrl: string;
  readonly time: string;
  readonly complete: boolean;
  readonly exports: ReadonlyArray<{ readonly export: string; readonly count: number; readonly available: boolean }>;
  readonly routes: ReadonlyArray<{ readonly route: string; readonly error?: string | undefined }>;
}

/** The notice of a published snapshot: by the run that wrote it, or by `notify <snapshot-dir>` again. */
export function snapshotNotice(
  manifest: NoticeManifest,
  where: {
    readonly outDir: string;
    readonly exitCode: number;
    readonly reportFile?: string;
    readonly previous?: { readonly dir: string | null; readonly changes?: ChangeSet };
    readonly findings?: FindingsIn;
    readonly rerun?: Rerun;
    readonly problems?: readonly string[];
  },
): RunNotice {
  const prev = where.previous;
  return {
    command: 'snapshot',
    site: manifest.baseUrl,
    time: manifest.time,
    exitCode: where.exitCode,
    failedRoutes: manifest.routes.flatMap((r) => (r.error !== undefined ? [{ route: r.route, error: r.error }] : [])),
    outDir: where.outDir,
    ...(where.reportFile !== undefined ? { reportFile: where.reportFile } : {}),
    exports: manifest.exports.map((e) => ({ export: e.export, count: e.count, available: e.available })),
    ...(prev && prev.dir !== null
      ? { previous: { dir: prev.dir, ...(prev.changes ? { changes: prev.changes } : {}) } }
      : {}),
    ...(where.findings ? { findings: where.findings } : {}),
    ...(where.rerun ? { rerun: where.rerun } : {}),
    ...(where.problems ? { problems: where.problems } : {}),
  };
}
