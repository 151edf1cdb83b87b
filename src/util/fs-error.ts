import { escapeControl } from './escape.js';

/** What to say for the file-system failures an operator can act on; undefined for the rest. */
const ADVICE: Record<string, { what: string; todo: string }> = {
  ENOSPC: {
    what: 'no space is left on the device',
    todo: 'free some space there, or choose an output directory on another file system (--out-dir)',
  },
  EDQUOT: {
    what: 'the disk quota is exhausted',
    todo: 'free some space within the quota, or choose another output directory (--out-dir)',
  },
  EFBIG: {
    what: 'the file grew past the largest size allowed (file-size limit)',
    todo: 'raise the limit (ulimit -f) or choose another output directory (--out-dir)',
  },
  ENAMETOOLONG: {
    what: 'a name is too long for the file system',
    todo: 'choose a shorter output directory (--out-dir)',
  },
  EACCES: {
    what: 'permission was denied',
    todo: 'check the owner and mode of that directory, or choose another output directory (--out-dir)',
  },
  EPERM: {
    what: 'the operation is not permitted',
    todo: 'check the owner, mode and attributes of that directory, or choose another output directory (--out-dir)',
  },
  EROFS: {
    what: 'the file system is read-only',
    todo: 'choose an output directory on a writable file system (--out-dir)',
  },
  ENOTDIR: {
    what: 'a part of the path is not a directory',
    todo: 'check the path, or choose another output directory (--out-dir)',
  },
  EMFILE: { what: 'too many files are open', todo: 'raise the limit on open files (ulimit -n) or lower --concurrency' },
  EIO: { what: 'the device reported an input/output error', todo: 'check the disk and its logs' },
};

/**
 * A file-system failure in words: the path, what happened and what to do
 * (README.md, "Output"). The path is the one the error names, or
 * `fallbackPath` when it names none or `preferFallback` (a mkdtemp template
 * means nothing to the reader; its directory does).
 */
export function describeFsError(err: unknown, fallbackPath?: string, preferFallback = false): string | undefined {
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.code !== 'string' || typeof e.syscall !== 'string') return undefined;
  const advice = ADVICE[e.code];
  if (!advice) return undefined;
  const where = preferFallback ? (fallbackPath ?? e.path) : (e.path ?? fallbackPath);
  return (
    `${advice.what} (${e.code}) while writing ${where ? escapeControl(where) : 'the output'}; nothing was ` +
    `published. ${advice.todo[0]!.toUpperCase()}${advice.todo.slice(1)}`
  );
}
