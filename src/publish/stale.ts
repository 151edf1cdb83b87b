import { lstatSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { escapeControl } from '../util/escape.js';
import { BODY_SPOOL_BASE, deadLeftover, removeDeadTempFiles, removeLeftover } from './leftovers.js';
import { writesLater } from './owned.js';
import { targetParts } from './staging.js';

/**
 * Deals with what a killed run (SIGKILL: the OOM killer, systemd after
 * TimeoutStopSec) left beside `targetDir`, where no signal handler ran to
 * clean up (README.md, "Output"): its staging directory, and the spool of
 * large bodies of any run into this parent, are removed; the
 * previous output it had moved aside is renamed back to `<base>` when the
 * run died before the new one took its place, else removed. Only a real
 * directory (never a link) owned by this user, whose pid is no running
 * process, is touched (deadLeftover): a concurrent run's are left alone.
 * Then the temporary files a killed `convert` or `report` left inside
 * `targetDir` (a real directory, not a link), of the names they write into
 * the snapshot its manifest describes (writesLater), are removed: they would make it
 * a directory holding files the tool did not finish, refused as a target.
 * Called before a new staging directory is made for `targetDir`; returns one
 * line for each directory or file, to warn with.
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
    const kind = (['partial', 'previous'] as const).find((k) => {
      const left = deadLeftover(k, parent, name)?.base;
      return left === base || (k === 'partial' && left === BODY_SPOOL_BASE);
    });
    if (!kind) continue;
    const left = kind === 'previous' ? 'left by a run killed while publishing' : 'left by a run that was killed';
    if (kind === 'partial' || lstatSync(target, { throwIfNoEntry: false })) {
      lines.push(removeLeftover(parent, name, left));
      continue;
    }
    const shown = escapeControl(name);
    try {
      renameSync(path.join(parent, name), target);
      lines.push(`restored ${escapeControl(base)} from ${shown}, ${left}`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      lines.push(`could not restore ${shown} (${code}), ${left}; rename it to ${escapeControl(base)} by hand`);
    }
  }
  if (lstatSync(target, { throwIfNoEntry: false })?.isDirectory())
    lines.push(...removeDeadTempFiles(target, writesLater(target)));
  return lines;
}
