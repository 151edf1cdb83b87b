import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { FailedError } from '../cli/errors.js';
import { secretForms } from '../util/redact.js';

/** Bytes read per step; a secret spanning two steps is still found (see `fileContains`). */
export const SCAN_CHUNK_BYTES = 64 * 1024;

export interface Tree {
  /** Relative paths, parents before children. */
  dirs: string[];
  files: string[];
}

/**
 * Lists a staging directory. Only plain files and directories are published:
 * a symlink could point outside the output and `chmod` would follow it.
 */
export async function listTree(root: string): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [] };
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true });
    for (const entry of entries) {
      const child = rel === '' ? entry.name : path.join(rel, entry.name);
      if (entry.isDirectory()) {
        tree.dirs.push(child);
        await walk(child);
      } else if (entry.isFile()) {
        tree.files.push(child);
      } else {
        throw new FailedError(`output entry ${child} is not a plain file or directory; nothing was published`);
      }
    }
  };
  await walk('');
  return tree;
}

/** Every form of every secret, as bytes; empty secrets are ignored. */
export function secretNeedles(secrets: readonly string[]): Buffer[] {
  const forms = new Set(secrets.filter((s) => s.length > 0).flatMap(secretForms));
  return [...forms].map((form) => Buffer.from(form, 'utf8'));
}

/**
 * Throws `FailedError` naming the first path (name or content) that holds a
 * secret. The message names the file, never the secret.
 */
export async function assertNoSecrets(root: string, tree: Tree, needles: readonly Buffer[]): Promise<void> {
  if (needles.length === 0) return;
  for (const rel of [...tree.dirs, ...tree.files]) {
    if (contains(Buffer.from(rel, 'utf8'), needles)) {
      // The name itself holds the token, so it cannot be shown.
      throw new FailedError('a token was found in the name of an output file; nothing was published');
    }
  }
  for (const rel of tree.files) {
    if (await fileContains(path.join(root, rel), needles)) {
      throw new FailedError(
        `a token was found in output file ${rel}; nothing was published (this is a bug: tokens must never be written to output)`,
      );
    }
  }
}

function contains(haystack: Buffer, needles: readonly Buffer[]): boolean {
  return needles.some((needle) => haystack.includes(needle));
}

/**
 * Reads the file in chunks into one buffer, keeping the last (longest needle
 * − 1) bytes of each window in front of the next chunk, so a needle that
 * straddles a chunk boundary lies whole inside a window. Works on bytes, so a
 * multi-byte character split by a boundary does not matter either.
 */
export async function fileContains(file: string, needles: readonly Buffer[]): Promise<boolean> {
  const overlap = Math.max(0, ...needles.map((n) => n.length - 1));
  const buf = Buffer.allocUnsafe(SCAN_CHUNK_BYTES + overlap);
  const handle = await open(file, 'r');
  try {
    let carried = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, carried, SCAN_CHUNK_BYTES, null);
      if (bytesRead === 0) return false;
      const end = carried + bytesRead;
      if (contains(buf.subarray(0, end), needles)) return true;
      carried = Math.min(overlap, end);
      buf.copyWithin(0, end - carried, end);
    }
  } finally {
    await handle.close();
  }
}
