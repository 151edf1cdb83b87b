/**
 * `svc-snapshot diff` as a library: the snapshot command's `--diff-previous`
 * calls findPreviousSnapshot, diffDirectories and formatChangeSet.
 */
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { CATALOG } from '../exports/catalog.js';
import type { ExportDef } from '../exports/define.js';
import { changeSetOf, diffExport } from './compare.js';
import { resolveIgnore } from './ignore.js';
import { loadSide, snapshotSide } from './read.js';
import type { ManifestEntry, Snapshot } from '../snapshot/dir.js';
import { openNight, type OpenedNight } from '../snapshot/open.js';
import type { ChangeSet, DiffOptions, ExportDiff, LoadedSide } from './types.js';
import type { IgnoreRules } from './ignore.js';

export { sameValue } from './compare.js';
export { differentSites, formatChangeSet } from './format.js';
export { DEFAULT_IGNORE, VOLATILE_COLUMNS, resolveIgnore } from './ignore.js';
export type * from './types.js';

/** The catalog exports named (in catalog order), or all; an unknown name is a usage error listing the valid ones. */
function selectExports(names: readonly string[] | undefined): ExportDef[] {
  if (names === undefined || names.length === 0) return [...CATALOG];
  const unknown = names.filter((n) => !CATALOG.some((e) => e.name === n));
  if (unknown.length > 0) {
    throw new UsageError(
      `--export: unknown export${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; valid exports: ${CATALOG.map((e) => e.name).join(', ')}`,
    );
  }
  return CATALOG.filter((e) => names.includes(e.name));
}

/**
 * The change set between two directories, each a snapshot or a raw
 * collection (built first). Options are checked before anything is read.
 * Throws UsageError (exit 2) for a missing directory or one that is neither
 * kind, FailedError (exit 1) for a damaged one.
 */
export async function diffDirectories(older: string, newer: string, opts: DiffOptions = {}): Promise<ChangeSet> {
  const exports = selectExports(opts.exports);
  const ignore = resolveIgnore(opts.ignore, CATALOG);
  const include = opts.include ?? [];
  const side = async (dir: string) => loadSide(await openNight(resolve(dir)), exports, include);
  const [a, b] = await Promise.all([side(older), side(newer)]);
  return diffSides(a, b, compared(exports, include, opts, a, b), ignore);
}

/** An export of an --include group is compared where a side holds it, or where it was asked for: two snapshots of the 15 diff as before. */
function compared(
  exports: readonly ExportDef[],
  include: readonly string[],
  opts: DiffOptions,
  a: LoadedSide,
  b: LoadedSide,
): ExportDef[] {
  return exports.filter(
    (d) =>
      d.include === undefined ||
      include.includes(d.include) ||
      opts.exports?.includes(d.name) ||
      a.listed.has(d.name) ||
      b.listed.has(d.name),
  );
}

/**
 * The change set of two sides, for the given exports (catalog order): one
 * export at a time, so that a snapshot side holds one export file at a time
 * (in one buffer: an export's bytes are valid until the side's next load).
 */
async function diffSides(
  older: LoadedSide,
  newer: LoadedSide,
  exports: readonly ExportDef[],
  ignore: IgnoreRules,
): Promise<ChangeSet> {
  const diffs: ExportDiff[] = [];
  for (const def of exports) {
    const [a, b] = await Promise.all([older.load(def.name), newer.load(def.name)]);
    diffs.push(diffExport(def, a, b, ignore.byExport.get(def.name)));
  }
  return changeSetOf(older.info, newer.info, diffs, ignore);
}

/**
 * The change set between `older` and an opened snapshot (the report's: a
 * published one, or one still in staging whose manifest is not yet
 * written), with the default options; `use` is given each of the newer
 * side's export files' bytes as the diff reads them, `useOlder` those of an
 * opened older snapshot.
 */
export async function diffWithSnapshot(
  older: string | OpenedNight,
  newer: Snapshot,
  use: (entry: ManifestEntry, bytes: Buffer) => void,
  useOlder?: (entry: ManifestEntry, bytes: Buffer) => void,
): Promise<ChangeSet> {
  const exports = selectExports(undefined);
  const night = typeof older === 'string' ? await openNight(resolve(older)) : older;
  const a = await loadSide(night, exports, [], useOlder);
  const b = snapshotSide(newer, exports, use);
  return diffSides(a, b, compared(exports, [], {}, a, b), resolveIgnore(undefined, CATALOG));
}
