/**
 * Writing a snapshot's files into its staging directory: raw/ (when asked)
 * and the exports as the build yields them. The build itself is pure
 * (src/exports/build.ts); this is where its output meets the disk.
 */
import { writeHashed } from './listed-files.js';
import { writeCollection } from '../collect/write.js';
import type { RawCollection } from '../collect/types.js';
import type { BuildSummary, BuiltExport } from '../exports/build.js';
import type { ManifestExport } from '../manifests.js';
import type { BodiesFree } from '../exports/memory-policy.js';
import { EXPORT_BATCH, exportFileName, serializeBatches } from '../exports/serialize.js';
import type { Staging } from '../publish/staging.js';

/**
 * Writes raw/ when asked (its manifest through `manifestTo`, the hashing
 * writer that lists it), and then gives the proof that the bodies are no
 * longer needed: the only way to a memory policy that lets the build consume
 * them (leanSnapshotMemory), so raw/ cannot be written from bodies the build
 * already released.
 */
export async function writeRawFirst(
  staging: Staging,
  collection: RawCollection,
  withRaw: boolean,
  manifestTo: Pick<Staging, 'writeFile'>,
): Promise<BodiesFree> {
  if (withRaw) await writeCollection(staging, collection, 'raw/', manifestTo);
  return {} as BodiesFree;
}

/**
 * Writes each export into `staging` as the build yields it, a batch of
 * records at a time: the snapshot without ever holding every export, or
 * every export's text, at once. Each file is written before the next export
 * is asked for. The files are byte for byte those of
 * `serializeExport(buildAll(…))`; the result is the build's summary and the
 * exports as the manifest lists them, in catalog order.
 */
export async function writeExports(
  staging: Pick<Staging, 'writeChunks'>,
  built: Generator<BuiltExport, BuildSummary, void>,
  date: string,
): Promise<BuildSummary & { exports: ManifestExport[] }> {
  // Filled by catalog position: every position of the exports built, so no gap is left.
  const exports: ManifestExport[] = [];
  try {
    let step: IteratorResult<BuiltExport, BuildSummary> | undefined = built.next();
    while (!step.done) {
      exports[step.value.index] = await writeOne(staging, step.value, date);
      // Let go of the export (its records' sources) before the next is asked for: the build may collect garbage then.
      step = undefined;
      step = built.next();
    }
    return { ...step.value, exports };
  } catch (err) {
    // Ends the build where it stopped; the write's failure is the one to report.
    try {
      built.return(undefined as never);
    } catch {
      // Ignored, as above.
    }
    throw err;
  }
}

/** One export's file, and its manifest entry. */
async function writeOne(staging: Pick<Staging, 'writeChunks'>, e: BuiltExport, date: string): Promise<ManifestExport> {
  const file = exportFileName(e.export, e.count, date);
  // The digest is of the bytes as written: no reading the file back, no second UTF-8 encoding of its text.
  const { sha256 } = await writeHashed(staging, file, serializeBatches(e.batches(EXPORT_BATCH)));
  return {
    export: e.export,
    file,
    count: e.count,
    available: e.available,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.proposedRoute !== undefined ? { proposedRoute: e.proposedRoute } : {}),
    sha256,
  };
}
