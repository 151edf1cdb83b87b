/**
 * The findings of an existing snapshot directory (`svc-snapshot findings`),
 * read without writing into it: the manifest as `convert` reads it, the
 * export files the rules read parsed and checked against the manifest's
 * `sha256` as they are read, and every other export file hashed and checked
 * as well, so that a directory whose exports were edited is refused whole
 * (exit 1), as `verify` refuses it.
 */
import { FailedError } from '../errors.js';
import { SNAPSHOT_MANIFEST } from '../collect/write.js';
import { readExportRecords, readSheetManifest, type SheetManifest } from '../sheets/snapshot-dir.js';
import { escapeControl } from '../util/escape.js';
import { hashFile, UnreadableEntryError, withFileInside } from '../util/safe-read.js';
import { evaluateFindings, type EvaluateOptions, type FindingsReport } from './evaluate.js';

async function checkHash(dir: string, file: string, sha256: string): Promise<void> {
  let actual: string;
  try {
    actual = await withFileInside(dir, file, async (handle) => hashFile(handle.fd).sha256);
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw new FailedError(`${err.message}; refusing to evaluate findings over ${escapeControl(dir)}`, { cause: err });
    throw err;
  }
  if (actual !== sha256) throw new FailedError(`"${escapeControl(file)}" in ${escapeControl(dir)} does not match the sha256 in ${SNAPSHOT_MANIFEST}; the file was changed after the snapshot was taken`);
}

/** The manifest's entries, looked up by export name. */
function entryOf(manifest: SheetManifest, name: string): SheetManifest['exports'][number] {
  const entry = manifest.exports.find((e) => e.export === name);
  // evaluateFindings loads only exports notEvaluatedReason found available in the manifest.
  if (!entry) throw new FailedError(`${SNAPSHOT_MANIFEST} lists no ${name} export`);
  return entry;
}

/** Evaluates the rules over the snapshot directory `dir`. */
export async function findingsOfDirectory(dir: string, opts: EvaluateOptions = {}): Promise<{ manifest: SheetManifest; report: FindingsReport }> {
  const manifest = await readSheetManifest(dir);
  const loaded = new Set<string>();
  const report = await evaluateFindings(
    manifest,
    (name, columns) => {
      loaded.add(name);
      return readExportRecords(dir, entryOf(manifest, name), { columns });
    },
    opts,
  );
  // The files no evaluated rule read are checked too: a changed one refuses the directory, as verify does.
  for (const e of manifest.exports) if (!loaded.has(e.export) && e.available && e.sha256 !== undefined) await checkHash(dir, e.file, e.sha256);
  return { manifest, report };
}
