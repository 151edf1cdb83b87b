/**
 * The one hashing writer: every file a snapshot writes goes through it, and
 * the size and sha256 of its bytes as written give the manifest its entry
 * (an export's `sha256`; `files`, the files a
 * snapshot holds besides its exports: spreadsheets, findings, the report,
 * the raw collection's manifest), so that `verify` covers them and a
 * signature of the manifest vouches for them too. No file is read back to
 * be listed.
 */
import { createHash } from 'node:crypto';
import type { ListedFile } from '../manifests.js';
import { toJsonFile } from '../collect/write.js';
import type { Staging } from '../publish/staging.js';

type Chunks = Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/** `chunks` written into `name` in `staging`, and the size and sha256 of the bytes as written. */
export async function writeHashed(
  staging: Pick<Staging, 'writeChunks'>,
  name: string,
  chunks: Chunks,
): Promise<ListedFile> {
  const hash = createHash('sha256');
  let bytes = 0;
  await staging.writeChunks(name, chunks, (b) => {
    hash.update(b);
    bytes += b.length;
  });
  return { name, bytes, sha256: hash.digest('hex') };
}

/** A writer into `staging` that keeps each file's size and sha256, as written, for the manifest's `files`. */
export function hashingWriter(staging: Pick<Staging, 'writeChunks'>): {
  readonly files: ListedFile[];
  writeChunks(name: string, chunks: Chunks): Promise<void>;
  writeFile(name: string, data: string | Uint8Array): Promise<void>;
} {
  const files: ListedFile[] = [];
  const writeChunks = async (name: string, chunks: Chunks) => {
    const entry = await writeHashed(staging, name, chunks);
    // A file written again is listed as last written.
    const at = files.findIndex((f) => f.name === name);
    if (at >= 0) files[at] = entry;
    else files.push(entry);
  };
  return { files, writeChunks, writeFile: (name, data) => writeChunks(name, [data]) };
}

/**
 * A snapshot manifest's text for an output that holds its exports and the
 * files named in `kept` alone (`history as-of`): what it lists is then all
 * there is, so that the output passes `verify`. The `files` entries of any
 * other file (spreadsheets, the report, `raw/_collection-manifest.json`) are
 * dropped, `files` itself when none is left; a route's `file` becomes null,
 * as a snapshot taken without --raw writes it (its bytes and sha256 stay).
 * A manifest that lists nothing else comes back byte for byte.
 */
export function manifestOfKept(manifestText: string, kept: readonly string[]): string {
  const m = JSON.parse(manifestText) as { files?: { name: string }[]; routes?: { file?: string | null }[] };
  let changed = false;
  if (m.files !== undefined) {
    const files = m.files.filter((f) => kept.includes(f.name));
    if (files.length !== m.files.length) {
      changed = true;
      if (files.length > 0) m.files = files;
      else delete m.files;
    }
  }
  for (const r of m.routes ?? []) {
    if (typeof r.file === 'string') {
      r.file = null;
      changed = true;
    }
  }
  return changed ? toJsonFile(m) : manifestText;
}
