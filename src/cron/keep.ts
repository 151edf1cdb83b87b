import { lstatSync, readdirSync, renameSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { format } from 'date-fns/format';
import { isValid } from 'date-fns/isValid';
import { parse } from 'date-fns/parse';
import { UsageError } from '../errors.js';
import { leftoverName, removeDeadLeftovers, removeDeadTempFiles } from '../publish/leftovers.js';
import type { OutputKind } from '../manifests.js';
import { ownedOutput, writesLater } from '../publish/owned.js';
import { removeArchiveOf } from '../archive/names.js';

const DATE = /\d{4}-\d{2}-\d{2}/g;

/** The name split around its last YYYY-MM-DD date, or undefined when it holds none. */
export function datedName(name: string): { prefix: string; date: string; suffix: string } | undefined {
  const matches = [...name.matchAll(DATE)].filter((m) => isCalendarDate(m[0]));
  const last = matches.at(-1);
  if (last?.index === undefined) return undefined;
  return { prefix: name.slice(0, last.index), date: last[0], suffix: name.slice(last.index + last[0].length) };
}

function isCalendarDate(s: string): boolean {
  const d = parse(s, 'yyyy-MM-dd', new Date(0));
  return isValid(d) && format(d, 'yyyy-MM-dd') === s;
}

/**
 * Up front, before any request: `--keep` with an `--out-dir` whose name has no
 * date could never find an older directory of its kind, so it is refused
 * rather than silently keeping everything.
 */
export function checkKeepTarget(keep: number | undefined, outDirFlag: string | undefined): void {
  if (keep === undefined || outDirFlag === undefined) return;
  if (!datedName(path.basename(path.resolve(outDirFlag)))) {
    throw new UsageError(
      `--keep needs an output directory whose name holds the date (YYYY-MM-DD), such as the default ` +
        `svc-snapshot-<date> or --out-dir /srv/snapshots/$(date +%F); ` +
        `older directories are the ones beside it whose names differ only in that date`,
    );
  }
}

export interface PruneResult {
  /** Absolute paths of the directories removed, oldest first. */
  readonly pruned: string[];
  /** Directories that qualified but could not be removed completely, with why. */
  readonly failures: Array<{ dir: string; error: string }>;
  /** Directories named like older outputs that were left alone, with why. */
  readonly left: Array<{ dir: string; reason: string }>;
  /** One line for each thing a killed run left that was removed (a prune's directory, a convert's file), to warn with. */
  readonly recovered: string[];
}

/**
 * Retention (docs/cron.md), called only after a complete run has
 * published `outDir`. Candidates are the directories beside it whose names
 * are its name with another date in the same place (`svc-snapshot-<date>`,
 * `svc-snapshot-raw-<date>`, or a custom `<prefix><date><suffix>`), and that
 * hold a complete manifest of `kind` and only files the tool wrote. Of those
 * and the new directory, the newest `keep` by date stay, and the new one
 * always stays. Synchronous: a signal cannot stop it between two directories'
 * checks and deletions. First, what a prune killed with SIGKILL left moved
 * aside (`.<name>.pruning-<pid>-…`, its pid no running process, `<name>` a
 * candidate's name) is removed: it was chosen for deletion, and nothing else
 * would ever remove it. So are the temporary files a killed `convert` or
 * `report` left inside an older snapshot found to be ours, of the names they
 * write there (its spreadsheet forms and report page). A directory deleted
 * takes its archive `<dir>.tar.age` and that archive's `.sig` with it.
 */
export function pruneOlder(outDir: string, kind: OutputKind, keep: number): PruneResult {
  const target = path.resolve(outDir);
  const parent = path.dirname(target);
  const base = path.basename(target);
  const own = datedName(base);
  if (!own) return { pruned: [], failures: [], left: [], recovered: [] };
  const sameKind = (name: string) => datedName(name)?.prefix === own.prefix && datedName(name)?.suffix === own.suffix;
  const recovered = removeDeadLeftovers('pruning', parent, sameKind, 'left by a --keep run that was killed');
  const result: PruneResult = { pruned: [], failures: [], left: [], recovered };

  const complete: Array<Checked & { date: string }> = [];
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    if (entry.name === base) continue;
    const named = datedName(entry.name);
    if (!named || named.prefix !== own.prefix || named.suffix !== own.suffix) continue;
    const dir = path.join(parent, entry.name);
    const checked = lstatSync(dir, { throwIfNoEntry: false });
    const owned = ownedOutput(dir, kind);
    if (!owned.owned || !checked) {
      result.left.push({ dir, reason: owned.owned ? 'is gone' : owned.reason });
      continue;
    }
    // Only in a directory found ours, only names convert and report write there: kept, it would hold them for good.
    if (kind === 'snapshot') result.recovered.push(...removeDeadTempFiles(dir, writesLater(dir)));
    complete.push({ dir, date: named.date, checked, ...owned.tree });
  }
  // ISO dates sort as text; the new directory takes part in the ranking.
  const ranked = [{ dir: target, date: own.date }, ...complete].sort((a, b) =>
    a.date < b.date ? 1 : a.date > b.date ? -1 : 0,
  );
  const kept = new Set(ranked.slice(0, keep).map((r) => r.dir));
  kept.add(target);
  for (const c of complete.sort((a, b) => (a.date < b.date ? -1 : 1))) {
    if (kept.has(c.dir)) continue;
    try {
      removeChecked(c);
      result.pruned.push(c.dir);
      // Its archive and the archive's signature (--encrypt-to) go with it.
      removeArchiveOf(c.dir);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ECHANGED')
        result.left.push({ dir: c.dir, reason: 'was published again by another run meanwhile' });
      else result.failures.push({ dir: c.dir, error: `${e.code ?? 'error'} on ${e.path ?? c.dir}` });
    }
  }
  return result;
}

/** A directory checked as an output of the tool: what it was (lstat) and the entries found in it. */
export interface Checked {
  readonly dir: string;
  readonly checked: Stats;
  readonly files: readonly string[];
  readonly dirs: readonly string[];
}

/**
 * Removes a checked directory, first moved aside under a name of its own: a
 * run publishing the same name meanwhile puts its new directory in place by
 * rename, and the one moved aside is then not the one checked (another
 * inode), so it is moved back and the removal fails, leaving it whole.
 */
export function removeChecked(c: Checked): void {
  const aside = path.join(path.dirname(c.dir), leftoverName('pruning', path.basename(c.dir)));
  renameSync(c.dir, aside);
  const now = lstatSync(aside);
  if (now.ino !== c.checked.ino || now.dev !== c.checked.dev) {
    renameSync(aside, c.dir);
    throw Object.assign(new Error('replaced since it was checked'), { code: 'ECHANGED', path: c.dir });
  }
  remove(aside, c.files, c.dirs);
}

/**
 * Removes exactly the entries that were checked: the manifest first, so that
 * a directory left half removed is no longer taken for a complete output;
 * `unlink` removes a link that appeared since as a link; and `rmdir` fails on
 * anything added since, leaving it in place.
 */
function remove(dir: string, files: readonly string[], dirs: readonly string[]): void {
  for (const rel of files) {
    try {
      unlinkSync(path.join(dir, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  for (const rel of dirs) rmdirSync(path.join(dir, rel));
}
