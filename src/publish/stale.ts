import { lstatSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { escapeControl } from '../util/escape.js';
import { targetParts } from './staging.js';

/**
 * The names a run gives what it has beside `<base>` while publishing, after
 * `.<base>.partial-` or `.<base>.previous-`: its pid, then mkdtemp's six
 * letters and digits (createStaging) or four random bytes in hex (publishSync).
 */
const STALE = { partial: /^([1-9]\d*)-[A-Za-z0-9]{6}$/, previous: /^([1-9]\d*)-[0-9a-f]{8}$/ } as const;
type StaleKind = keyof typeof STALE;

/**
 * Deals with what a killed run (SIGKILL: the OOM killer, systemd after
 * TimeoutStopSec) left beside `targetDir`, where no signal handler ran to
 * clean up (CONTRACT section 6): its staging directory is removed; the
 * previous output it had moved aside is renamed back to `<base>` when the
 * run died before the new one took its place, else removed. Only a real
 * directory (never a link) owned by this user, whose pid is no running
 * process, is touched: a concurrent run's are left alone. Called before a
 * new staging directory is made for `targetDir`; returns one line for each
 * directory, to warn with.
 */
export function recoverStale(targetDir: string): string[] {
  const { target, parent, base } = targetParts(targetDir);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const name of names.sort()) {
    const kind = staleKind(name, base);
    if (!kind || !ownDirectory(path.join(parent, name))) continue;
    const restore = kind === 'previous' && !lstatSync(target, { throwIfNoEntry: false });
    const shown = escapeControl(name);
    const left = kind === 'previous' ? 'left by a run killed while publishing' : 'left by a run that was killed';
    try {
      if (restore) renameSync(path.join(parent, name), target);
      else rmSync(path.join(parent, name), { recursive: true, force: true });
      lines.push(restore ? `restored ${escapeControl(base)} from ${shown}, ${left}` : `removed ${shown}, ${left}`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      const todo = restore ? `rename it to ${escapeControl(base)}` : 'remove it';
      lines.push(`could not ${restore ? 'restore' : 'remove'} ${shown} (${code}), ${left}; ${todo} by hand`);
    }
  }
  return lines;
}

/** Which of a killed run's directories `name` is named as, for `base`, when its pid is not running. */
function staleKind(name: string, base: string): StaleKind | undefined {
  for (const kind of ['partial', 'previous'] as const) {
    const prefix = `.${base}.${kind}-`;
    if (!name.startsWith(prefix)) continue;
    const pid = STALE[kind].exec(name.slice(prefix.length))?.[1];
    return pid !== undefined && !isRunning(Number(pid)) ? kind : undefined;
  }
  return undefined;
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

/** A directory itself (lstat: not a link to one) owned by the user this process runs as. */
function ownDirectory(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return st !== undefined && st.isDirectory() && st.uid === process.getuid?.();
}
