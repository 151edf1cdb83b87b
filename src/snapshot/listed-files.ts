/**
 * The manifest's `files` (CONTRACT section 13): the files a snapshot holds
 * besides its exports (spreadsheets, the raw collection's manifest), each
 * with its size and sha256, so that `verify` covers them and a signature of
 * the manifest vouches for them too. Hashed from the staging directory once
 * written, a buffer at a time.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { hashFile } from '../util/safe-read.js';
import type { ListedFile } from '../exports/manifest.js';
import { toJsonFile } from '../collect/write.js';
import type { Staging } from '../publish/staging.js';

/**
 * Size and sha256 of each of `names` (relative paths, `/`-separated) in
 * `dir`, in the order given; a name in `hashedAsWritten` (its bytes hashed as
 * they were written) is listed as given there.
 */
export async function listedFiles(dir: string, names: readonly string[], hashedAsWritten: readonly ListedFile[] = []): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  for (const name of names) {
    const known = hashedAsWritten.find((f) => f.name === name);
    if (known) {
      out.push(known);
      continue;
    }
    const handle = await open(path.join(dir, ...name.split('/')), 'r');
    try {
      const { size, sha256 } = hashFile(handle.fd);
      out.push({ name, bytes: size, sha256 });
    } finally {
      await handle.close();
    }
  }
  return out;
}

/** `chunks` written into `name` in `staging`, and the size and sha256 of the bytes as written (no reading the file back). */
export async function writeHashed(staging: Pick<Staging, 'writeChunks'>, name: string, chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>): Promise<ListedFile> {
  const hash = createHash('sha256');
  let bytes = 0;
  await staging.writeChunks(name, chunks, (b) => {
    hash.update(b);
    bytes += b.length;
  });
  return { name, bytes, sha256: hash.digest('hex') };
}

/**
 * A writer into `staging` that takes each file's size and sha256 from its
 * bytes as they are written (`files`, for listedFiles' `hashedAsWritten`):
 * a file it wrote is not read back to be listed.
 */
export function hashingWriter(staging: Pick<Staging, 'writeChunks'>): {
  readonly files: ListedFile[];
  writeChunks(name: string, chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>): Promise<void>;
} {
  const files: ListedFile[] = [];
  return {
    files,
    async writeChunks(name, chunks) {
      const entry = await writeHashed(staging, name, chunks);
      // A file written again is listed as last written.
      const at = files.findIndex((f) => f.name === name);
      if (at >= 0) files[at] = entry;
      else files.push(entry);
    },
  };
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
