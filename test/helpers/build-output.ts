/**
 * What the differential build tests compare: every export file's bytes, and
 * the rest of the build (validation, drift, nulls) without the records.
 * The VM exports (--include vms) are built too, so that they are compared
 * with the rest.
 */
import { join } from 'node:path';
import { readCollection } from '../../src/collect/replay.js';
import type { RawCollection } from '../../src/collect/types.js';
import { buildAll } from '../../src/exports/build.js';
import { serializeExport } from '../../src/exports/serialize.js';
import type { BuildOptions } from '../../src/exports/types.js';
import { REPO_ROOT } from './run-cli.js';

export function builtOutput(c: RawCollection, options: BuildOptions = {}): { files: string[]; rest: string } {
  const r = buildAll(c, ['vms'], options);
  return {
    files: r.exports.map(serializeExport),
    rest: JSON.stringify({ ...r, exports: r.exports.map((e) => ({ ...e, records: undefined })) }),
  };
}

export type NamedCollection = [string, () => Promise<RawCollection> | RawCollection];

/** The two shipped recordings, read as --replay reads them. */
export const RECORDING_COLLECTIONS: NamedCollection[] = [
  ['the recording platform-3.14.1', () => readCollection(join(REPO_ROOT, 'recordings', 'platform-3.14.1'))],
  ['the recording platform-3.13.8', () => readCollection(join(REPO_ROOT, 'recordings', 'platform-3.13.8'))],
];
