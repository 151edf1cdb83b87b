import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';

import { MANIFEST_OF, type OutputKind } from '../manifests.js';
import { ownedOutput } from './owned.js';

export { type OutputKind };

/** The path with every link resolved, or as given when it cannot be (it does not exist yet). */
export function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Whether `candidate` is `of` or a directory above it (both resolved paths). */
export function isSameOrAncestor(candidate: string, of: string): boolean {
  const rel = path.relative(candidate, of);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const REPLACED_WHOLE =
  'the output directory is replaced as a whole, so it must be a directory of its own, ' +
  'e.g. --out-dir ./svc-snapshot-nightly';

/**
 * `--out-dir` values that name a place the tool must never replace: an empty
 * value (an unset shell variable in a cron line), `/`, the working directory
 * or any directory above it, and the home directory. Replacing any of these
 * would delete whatever else lives there. `why` ends the message: what the
 * command does with the directory.
 */
export function assertSafeTarget(flagValue: string, cwd: string, home: string = homedir(), why = REPLACED_WHOLE): void {
  if (flagValue.trim() === '') {
    throw new UsageError(
      '--out-dir is empty (an unset variable?); give the directory to write, e.g. --out-dir /var/lib/svc/snapshots/nightly',
    );
  }
  const target = path.resolve(cwd, flagValue);
  const resolved = real(target);
  const where = escapeControl(flagValue);
  const refused = (what: string) => new UsageError(`--out-dir "${where}" is ${what}; ${why}`);
  if (path.dirname(resolved) === resolved) throw refused('the root directory');
  for (const c of new Set([cwd, real(cwd)])) {
    if (isSameOrAncestor(target, c) || isSameOrAncestor(resolved, c)) {
      throw refused(target === c || resolved === c ? 'the working directory' : 'a parent of the working directory');
    }
  }
  for (const h of new Set([home, real(home)])) {
    if (h && (target === h || resolved === h)) throw refused('the home directory');
  }
}

/** Why `dir` is not empty and not an earlier output of `kind` holding only what this tool writes; undefined when it may be replaced. */
function foreignContent(dir: string, kind: OutputKind): string | undefined {
  if (readdirSync(dir).length === 0) return undefined;
  if (!lstatSync(path.join(dir, MANIFEST_OF[kind]), { throwIfNoEntry: false }))
    return `it is not empty and holds no ${MANIFEST_OF[kind]}`;
  const verdict = ownedOutput(dir, kind, { complete: false });
  return verdict.owned ? undefined : `it ${verdict.reason}`;
}

/**
 * Refuses (exit 2) to replace anything but a missing directory, an empty
 * one, or one holding a manifest of the same kind and only files this tool
 * writes. Synchronous: it runs just before the rename that replaces it.
 */
export function assertReplaceable(target: string, kind: OutputKind | undefined): void {
  const st = lstatSync(target, { throwIfNoEntry: false });
  if (!st) return;
  const shown = escapeControl(target);
  if (!st.isDirectory()) {
    throw new UsageError(
      `${shown} exists and is not a directory; nothing was written and it was left as it is. Remove it or choose ` +
        `another output directory (--out-dir)`,
    );
  }
  let why: string | undefined;
  try {
    why = kind ? foreignContent(target, kind) : readdirSync(target).length > 0 ? 'it is not empty' : undefined;
  } catch (err) {
    why = `it cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (why) {
    throw new UsageError(
      `refusing to replace ${shown}: ${why}. Only an empty directory or an earlier output of the same command is ` +
        `replaced; choose another output directory (--out-dir), or move its contents away`,
    );
  }
}
