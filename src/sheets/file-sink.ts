/**
 * Writing one output file in place of another without a moment where it is
 * half written: a temporary name beside it (created exclusively, 0600,
 * registered so that a signal removes it), renamed over the final name when
 * complete. `convert` writes into a snapshot that is already published.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedError } from '../errors.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';
import { FILE_MODE, writeAll } from '../publish/staging.js';
import type { SheetSink } from './write.js';

function fsFailure(path: string, err: unknown): FailedError {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  const hint =
    code === 'ENOSPC'
      ? 'free some space and run again'
      : code === 'EACCES' || code === 'EPERM'
        ? 'check the permissions of the directory'
        : code === 'ENAMETOOLONG'
          ? 'use a shorter --out-dir'
          : 'check the directory and run again';
  return new FailedError(`cannot write ${path} (${code}); ${hint}. The file was not written`, { cause: err });
}

/** A sink writing each file into `dir` by temporary name and rename. */
export function renamingSink(dir: string): SheetSink {
  return async (name, chunks) => {
    const final = join(dir, name);
    const temp = join(dir, `.${name}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
    let handle: FileHandle;
    try {
      handle = await open(
        temp,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        FILE_MODE,
      );
    } catch (err) {
      throw fsFailure(temp, err);
    }
    registerStaging(temp);
    let ok = false;
    try {
      try {
        for await (const chunk of chunks)
          await writeAll(handle, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
        await handle.chmod(FILE_MODE);
      } catch (err) {
        if (err instanceof FailedError || !(err as NodeJS.ErrnoException).code) throw err;
        throw fsFailure(temp, err);
      } finally {
        await handle.close();
      }
      try {
        await rename(temp, final);
      } catch (err) {
        throw fsFailure(final, err);
      }
      ok = true;
    } finally {
      unregisterStaging(temp);
      if (!ok) await rm(temp, { force: true });
    }
  };
}
