import type { Reporter } from '../progress/reporter.js';
import { pruneOlder } from './keep.js';
import type { OutputKind } from '../manifests.js';
import { escapeControl as shown } from '../util/escape.js';

/**
 * `--keep` after a publish: prunes only when the run is complete (an
 * incomplete one must not push out the last complete directory), reports
 * what was left and why, and never fails the run. Undefined without --keep,
 * so the summary shows `pruned` only when it was asked for.
 */
export function applyKeep(
  keep: number | undefined,
  complete: boolean,
  outDir: string,
  kind: OutputKind,
  reporter: Reporter,
): string[] | undefined {
  if (keep === undefined) return undefined;
  if (!complete) {
    reporter.warn('--keep: the run is incomplete, so no older directory was deleted');
    return [];
  }
  let result: ReturnType<typeof pruneOlder>;
  try {
    result = pruneOlder(outDir, kind, keep);
  } catch (err) {
    reporter.error(
      `--keep: could not list the directories beside ${outDir} ` +
        `(${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); nothing was deleted`,
    );
    return [];
  }
  for (const line of result.recovered) reporter.warn(`--keep: ${line}`);
  for (const l of result.left) reporter.info(`--keep: left ${shown(l.dir)}: it ${shown(l.reason)}`);
  for (const f of result.failures)
    reporter.error(
      `--keep: could not delete ${shown(f.dir)} completely (${shown(f.error)}); remove what is left of it by hand`,
    );
  for (const dir of result.pruned) reporter.info(`--keep: deleted ${shown(dir)}`);
  return result.pruned;
}

export function formatPruned(pruned: readonly string[] | undefined): string[] {
  if (pruned === undefined) return [];
  if (pruned.length === 0) return ['  --keep: no older directory deleted'];
  return pruned.map((dir) => `  deleted older ${shown(dir)}`);
}
