import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedError } from '../cli/errors.js';

/** A file name from a manifest must name a file inside the directory, nothing else. */
/** A name from a file, as it may be printed: control characters escaped, cut to a sane length. */
export function shown(name: string): string {
  return JSON.stringify(name.slice(0, 120)).slice(1, -1);
}

export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * Reads `dir/name` only if it is a regular file reached without following a
 * symbolic link (O_NOFOLLOW, then fstat on the open descriptor, so that the
 * file checked is the file read). CONTRACT section 5: files of a snapshot are
 * never read through a link or by a name with a path separator.
 */
export async function readRegularFile(dir: string, name: string): Promise<Buffer> {
  if (!isPlainFileName(name)) throw new FailedError(`the manifest in ${dir} names "${shown(name)}", which is not a plain file name; the snapshot is damaged or hostile, and was not loaded`);
  let handle;
  try {
    handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new FailedError(`${shown(name)} in ${dir} is a symbolic link; files of a snapshot are read only as regular files, so it was not loaded`);
    throw new FailedError(`${shown(name)} is listed in the manifest but cannot be read from ${dir} (${code ?? 'error'}); the snapshot is incomplete and was not loaded`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new FailedError(`${shown(name)} in ${dir} is not a regular file; it was not loaded`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
