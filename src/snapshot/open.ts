/**
 * A night as `diff`, `history load` and the report read one: a snapshot
 * directory, opened (its manifest read and checked), or a raw collection,
 * read and built as `--replay` builds it only when asked.
 */
import { readCollection } from '../collect/replay.js';
import type { RawCollection } from '../collect/types.js';
import { buildAll } from '../exports/build.js';
import type { BuildResult } from '../exports/types.js';
import type { Include } from '../includes.js';
import { openSnapshotOrCollection, type Snapshot } from './dir.js';

export type BuiltCollection = { readonly collection: RawCollection; readonly built: BuildResult };
export type OpenedNight =
  | { readonly dir: string; readonly snapshot: Snapshot }
  | {
      readonly dir: string;
      readonly snapshot?: never;
      readonly build: (i: readonly Include[]) => Promise<BuiltCollection>;
    };

/** What `dir` holds, opened; a usage error ending with `hint` when it is neither a snapshot nor a raw collection. */
export async function openNight(
  dir: string,
  hint = 'give a snapshot directory or a raw collection',
): Promise<OpenedNight> {
  const snapshot = await openSnapshotOrCollection(dir, hint);
  const build = async (include: readonly Include[]) => {
    const collection = await readCollection(dir);
    return { collection, built: buildAll(collection, include) };
  };
  return snapshot ? { dir, snapshot } : { dir, build };
}
