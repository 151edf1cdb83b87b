import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isLiveStaging, registerStaging, unregisterStaging } from './registry.js';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** A temporary directory beside a target, filled and then published by `commit`. */
export interface Staging {
  /** Absolute path of the staging directory. */
  readonly dir: string;
  /** Writes `relPath` (relative, inside `dir`) with mode 0600, creating directories with 0700. */
  writeFile(relPath: string, data: string | Uint8Array): Promise<void>;
  /** Removes the staging directory; does nothing once it is discarded or published. */
  discard(): void;
}

/** Absolute target path, its parent, and its base name. */
export function targetParts(targetDir: string): { target: string; parent: string; base: string } {
  const target = path.resolve(targetDir);
  const parent = path.dirname(target);
  const base = path.basename(target);
  if (parent === target || base === '') throw new Error(`cannot publish to ${target}: it has no parent directory`);
  return { target, parent, base };
}

/**
 * Creates the staging directory in the target's parent, so that publishing is
 * a rename within one file system. Created and registered synchronously: no
 * signal can arrive between the two.
 */
export async function createStaging(targetDir: string): Promise<Staging> {
  const { parent, base } = targetParts(targetDir);
  mkdirSync(parent, { recursive: true, mode: DIR_MODE });
  const dir = mkdtempSync(path.join(parent, `.${base}.partial-${process.pid}-`));
  registerStaging(dir);
  try {
    chmodSync(dir, DIR_MODE);
  } catch (err) {
    discardDir(dir);
    throw err;
  }
  return {
    dir,
    writeFile: (relPath, data) => writeInto(dir, relPath, data),
    discard: () => discardDir(dir),
  };
}

function discardDir(dir: string): void {
  if (!isLiveStaging(dir)) return;
  rmSync(dir, { recursive: true, force: true });
  unregisterStaging(dir);
}

async function writeInto(dir: string, relPath: string, data: string | Uint8Array): Promise<void> {
  const segments = safeSegments(dir, relPath);
  assertLive(dir);
  // One level at a time, never `recursive`: if the staging directory is
  // discarded while this write is in flight, mkdir fails instead of
  // re-creating it and leaving it behind.
  let current = dir;
  for (const segment of segments.slice(0, -1)) {
    current = path.join(current, segment);
    try {
      await mkdir(current, { mode: DIR_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  assertLive(dir);
  await writeFile(path.join(dir, ...segments), data, { mode: FILE_MODE });
}

/** Path segments of `relPath`, refusing anything that is absolute or leaves `dir`. */
function safeSegments(dir: string, relPath: string): string[] {
  const rel = path.relative(dir, path.resolve(dir, relPath));
  if (
    relPath === '' ||
    relPath.includes('\0') ||
    path.isAbsolute(relPath) ||
    rel === '' ||
    rel === '..' ||
    rel.startsWith(`..${path.sep}`) ||
    path.isAbsolute(rel)
  ) {
    throw new Error(`refusing to write ${JSON.stringify(relPath)}: not a relative path inside the staging directory`);
  }
  return rel.split(path.sep);
}

function assertLive(dir: string): void {
  if (!isLiveStaging(dir)) throw new Error(`staging directory ${dir} was already published or discarded`);
}
