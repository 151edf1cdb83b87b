import { FailedError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { hashFile, isPlainFileName, readInside, UnreadableEntryError, withFileInside } from '../util/safe-read.js';

export { isPlainFileName };

/** A name from a file, as it may be printed: control characters escaped, cut to a sane length. */
export function shown(name: string): string {
  return escapeControl(name.slice(0, 120));
}

/**
 * `dir/name` read as replay and diff read it (a regular file directly inside
 * the directory, never through a link: CONTRACT section 5), failing the load
 * of that snapshot (exit 1) when it is not one.
 */
export async function readRegularFile(dir: string, name: string): Promise<Buffer> {
  try {
    return await readInside(dir, name);
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw new FailedError(`${err.message}; the snapshot was not loaded`, { cause: err });
    throw err;
  }
}

/**
 * The size and sha256 of `dir/name`, under readRegularFile's rules, read a
 * piece at a time: a large export file is never held whole.
 */
export async function checkRegularFile(dir: string, name: string): Promise<{ size: number; sha256: string }> {
  try {
    return await withFileInside(dir, name, async (handle) => hashFile(handle.fd));
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw new FailedError(`${err.message}; the snapshot was not loaded`, { cause: err });
    throw err;
  }
}
