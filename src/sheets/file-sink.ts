/**
 * Writing one output file in place of another without a moment where it is
 * half written: a temporary name beside it (created exclusively, 0600,
 * registered so that a signal removes it), renamed over the final name when
 * complete, or, for `convert`, when every file is complete. `convert` writes
 * into a snapshot that is already published.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FailedError } from '../errors.js';
import { leftoverName } from '../publish/leftovers.js';
import { registerStaging, unregisterStaging } from '../publish/registry.js';
import { FILE_MODE, writeAll } from '../publish/staging.js';
import { escapeControl } from '../util/escape.js';
import type { SheetSink } from './write.js';

/** The failure to write `path`, the final name (never the temporary one, which the user did not give). */
function fsFailure(path: string, err: unknown): FailedError {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  const hint =
    code === 'ENOSPC'
      ? 'free some space and run again'
      : code === 'EACCES' || code === 'EPERM'
        ? 'check the permissions of the directory'
        : code === 'ENAMETOOLONG'
          ? 'use a shorter --out-dir or --out'
          : code === 'ENOENT' || code === 'ENOTDIR'
            ? `${escapeControl(dirname(path))} is not a directory that exists: create it, or give a file in one that does`
            : 'check the directory and run again';
  return new FailedError(`cannot write ${escapeControl(path)} (${code}); ${hint}. The file was not written`, {
    cause: err,
  });
}

/** Writes `chunks` into a new temporary file beside `dir/name` (registered, so that a signal removes it); its path. */
async function writeTemp(
  dir: string,
  name: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<string> {
  const temp = join(dir, leftoverName('temp', name));
  const final = join(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      FILE_MODE,
    );
  } catch (err) {
    throw fsFailure(final, err);
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
      throw fsFailure(final, err);
    } finally {
      await handle.close();
    }
    ok = true;
    return temp;
  } finally {
    if (!ok) {
      unregisterStaging(temp);
      await rm(temp, { force: true });
    }
  }
}

/** Renames a temporary file written by writeTemp over `final`; it is removed when that fails. */
async function publishTemp(temp: string, final: string): Promise<void> {
  try {
    await rename(temp, final);
  } catch (err) {
    await rm(temp, { force: true });
    throw fsFailure(final, err);
  } finally {
    unregisterStaging(temp);
  }
}

/** What a file system entry is, for a message: a directory, a symbolic link, … */
function entryKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * Fails when a file would be renamed over something other than a regular
 * file (a directory, a symbolic link, …): checked for every file before any
 * is renamed, so that such a target fails the commit with none published.
 */
async function assertRegularTargets(finals: readonly string[]): Promise<void> {
  for (const final of finals) {
    let st: Stats | undefined;
    try {
      st = await lstat(final);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw fsFailure(final, err);
    }
    if (!st.isFile())
      throw new FailedError(
        `cannot write ${escapeControl(final)}: it exists and is ${entryKind(st)}, not a file; nothing was ` +
          `written. Move it away (or choose another --out-dir) and run again`,
      );
  }
}

/** A sink writing each file into `dir` by temporary name and rename. */
export function renamingSink(dir: string): SheetSink {
  return async (name, chunks) => publishTemp(await writeTemp(dir, name, chunks), join(dir, name));
}

/**
 * A sink writing each file into `dir` by temporary name, all renamed into
 * place by `commit` once every one is written; `discard` removes them. A
 * failure after the first file (an export found changed), or a final name
 * taken by something other than a regular file (a directory, a symbolic
 * link), leaves none of them, and the files of an earlier run in `dir` as
 * they were.
 */
export function stagingSink(dir: string): { sink: SheetSink; commit(): Promise<void>; discard(): Promise<void> } {
  const staged: Array<{ temp: string; final: string }> = [];
  const discard = async (): Promise<void> => {
    for (const { temp } of staged.splice(0)) {
      unregisterStaging(temp);
      await rm(temp, { force: true });
    }
  };
  return {
    sink: async (name, chunks) => {
      staged.push({ temp: await writeTemp(dir, name, chunks), final: join(dir, name) });
    },
    commit: async () => {
      try {
        await assertRegularTargets(staged.map((f) => f.final));
        while (staged.length > 0) {
          const { temp, final } = staged[0]!;
          await publishTemp(temp, final);
          staged.shift();
        }
      } finally {
        await discard();
      }
    },
    discard,
  };
}
