/**
 * What `verify` reads of an output, whether it lies on disk or streamed out
 * of an archive: each entry's type (as lstat says it: a link is never
 * followed), a file's size and sha256, a directory's entries, and the few
 * small files it reads whole (the manifest, its signature). One checking
 * code (verify-dir.ts) runs over either, so an archive is checked exactly as
 * a directory is.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { readSignatureFile, type SignatureFile } from '../sign/manifest-signature.js';
import { hashFile, readManifestJson, UnreadableEntryError, withFileInside } from '../util/safe-read.js';

export type EntryType = 'file' | 'directory' | 'symbolic link' | 'FIFO' | 'socket' | 'device' | 'other';

/** What a file holds, or why it could not be read. */
type Content = { readonly size: number; readonly sha256: string | undefined } | { readonly unreadable: string };

export interface Tree {
  /** What is at `rel` (`/`-separated, relative to the output), undefined when nothing is. */
  type(rel: string): Promise<EntryType | undefined>;
  /** A file's size, and its sha256 when `hash`; read as a regular file inside the output, never through a link. */
  content(rel: string, hash: boolean): Promise<Content>;
  /** The entries of a directory, or why it cannot be listed. */
  list(rel: string): Promise<Array<{ name: string; type: EntryType }> | { unreadable: string }>;
  /** A manifest's bytes and parse (readManifestJson's answer). */
  manifest(name: string): ReturnType<typeof readManifestJson>;
  /** A signature file at the top (readSignatureFile's answer). */
  signature(name: string): Promise<SignatureFile>;
}

function typeOf(info: Stats): EntryType {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isSymbolicLink()) return 'symbolic link';
  if (info.isFIFO()) return 'FIFO';
  if (info.isSocket()) return 'socket';
  if (info.isBlockDevice() || info.isCharacterDevice()) return 'device';
  return 'other';
}

/** The output directory `dir` on disk. */
export function diskTree(dir: string): Tree {
  const abs = (rel: string) => (rel === '' ? dir : path.join(dir, ...rel.split('/')));
  return {
    async type(rel) {
      const info = await lstat(abs(rel)).catch(() => undefined);
      return info && typeOf(info);
    },
    async content(rel, hash) {
      const parts = rel.split('/');
      const name = parts.pop()!;
      try {
        return await withFileInside(abs(parts.join('/')), name, async (handle, size) => ({
          size,
          sha256: hash ? hashFile(handle.fd).sha256 : undefined,
        }));
      } catch (err) {
        if (err instanceof UnreadableEntryError) return { unreadable: err.problem };
        throw err;
      }
    },
    async list(rel) {
      const entries = await readdir(abs(rel), { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => err);
      if (entries instanceof Error) return { unreadable: `cannot be listed (${entries.code ?? 'error'})` };
      return entries.map((e) => ({
        name: e.name,
        type: e.isSymbolicLink()
          ? 'symbolic link'
          : e.isDirectory()
            ? 'directory'
            : e.isFile()
              ? 'file'
              : ('other' as EntryType),
      }));
    },
    manifest: (name) => readManifestJson(dir, name),
    signature: (name) => readSignatureFile(dir, name),
  };
}
