import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { escapeControl } from '../util/escape.js';

/**
 * The names a run gives what it keeps beside (or, for a file, inside) an
 * output only while it works, built and recognised here side by side so that
 * the two cannot drift. Each holds the run's pid: one whose pid is no running
 * process was left by a run killed with SIGKILL (no signal handler ran), and
 * the next run may remove it (docs/cron.md).
 *
 * - `partial`: a staging directory, `.<base>.partial-<pid>-` and mkdtemp's
 *   six letters and digits (createStaging).
 * - `previous`: the output moved aside while publishing, `.<base>.previous-<pid>-<8 hex>`.
 * - `pruning`: an older output moved aside by `--keep` to be deleted, `.<base>.pruning-<pid>-<8 hex>`.
 * - `temp`: a file written by temporary name (convert, report), `.<name>.partial-<pid>-<8 hex>`.
 */
export type LeftoverKind = 'partial' | 'previous' | 'pruning' | 'temp';

const PATTERNS: Record<LeftoverKind, { word: string; tail: string; entry: 'directory' | 'file' }> = {
  partial: { word: 'partial', tail: '[A-Za-z0-9]{6}', entry: 'directory' },
  previous: { word: 'previous', tail: '[0-9a-f]{8}', entry: 'directory' },
  pruning: { word: 'pruning', tail: '[0-9a-f]{8}', entry: 'directory' },
  temp: { word: 'partial', tail: '[0-9a-f]{8}', entry: 'file' },
};

/** Linux's pid_max is at most 2^22: seven digits. */
const PID = '([1-9]\\d{0,6})';

const RECOGNISERS = Object.fromEntries(
  Object.entries(PATTERNS).map(([kind, p]) => [kind, new RegExp(`^\\.(.+)\\.${p.word}-${PID}-${p.tail}$`, 's')]),
) as Record<LeftoverKind, RegExp>;

/**
 * The base name of a live run's spool of large bodies (src/collect/body-spool.ts), a `partial` directory beside the
 * output: any run publishing into that directory removes a killed run's.
 */
export const BODY_SPOOL_BASE = 'svc-snapshot-bodies';

/** The prefix mkdtemp completes (six letters and digits) into a staging directory's name for `base`. */
export function stagingPrefix(base: string): string {
  return `.${base}.${PATTERNS.partial.word}-${process.pid}-`;
}

/** A new name of `kind` for `base`, holding this process's pid. */
export function leftoverName(kind: Exclude<LeftoverKind, 'partial'>, base: string): string {
  return `.${base}.${PATTERNS[kind].word}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** The name `name` was built from and the pid it holds, when it is named exactly as `kind` builds it. */
export function parseLeftover(kind: LeftoverKind, name: string): { base: string; pid: number } | undefined {
  const m = RECOGNISERS[kind].exec(name);
  return m ? { base: m[1]!, pid: Number(m[2]) } : undefined;
}

/**
 * The parsed name of `parent/name` when it is a leftover of `kind` that a
 * killed run left: named exactly so, its pid no running process, and itself
 * (lstat: never a link) a directory or a file, as `kind` is, owned by the
 * user this process runs as.
 */
export function deadLeftover(
  kind: LeftoverKind,
  parent: string,
  name: string,
): { base: string; pid: number } | undefined {
  const parsed = parseLeftover(kind, name);
  if (!parsed || isRunning(parsed.pid)) return undefined;
  const st = lstatSync(path.join(parent, name), { throwIfNoEntry: false });
  const isEntry = PATTERNS[kind].entry === 'directory' ? st?.isDirectory() : st?.isFile();
  return isEntry && st?.uid === process.getuid?.() ? parsed : undefined;
}

/**
 * Removes from `dir` every dead leftover of `kind` (deadLeftover) whose base
 * name `accept`s; one line for each, to warn with, saying it was `left`
 * (`left by a run that was killed`).
 */
export function removeDeadLeftovers(
  kind: LeftoverKind,
  dir: string,
  accept: (base: string) => boolean,
  left: string,
): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const name of names.sort()) {
    const found = deadLeftover(kind, dir, name);
    if (found && accept(found.base)) lines.push(removeLeftover(dir, name, left));
  }
  return lines;
}

/**
 * Removes from `dir` the temporary files (`temp`) of the names `accept`s
 * that a killed `convert` or `report` left there: written by temporary name
 * and renamed only when complete, a killed run leaves them where the next
 * `verify` finds a file the manifest does not list, and the next publish of
 * that directory refuses to replace it.
 */
export function removeDeadTempFiles(dir: string, accept: (name: string) => boolean = () => true): string[] {
  return removeDeadLeftovers(
    'temp',
    dir,
    accept,
    `left in ${escapeControl(dir)} by a convert or report that was killed`,
  );
}

/** Removes `dir/name` (a link inside is removed, never followed); the line saying so, or what to do by hand. */
export function removeLeftover(dir: string, name: string, left: string): string {
  try {
    rmSync(path.join(dir, name), { recursive: true, force: true });
    return `removed ${escapeControl(name)}, ${left}`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return `could not remove ${escapeControl(name)} (${code}), ${left}; remove it by hand`;
  }
}

/** Whether `pid` may be a running process: only ESRCH says it is not (EPERM: it runs as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
