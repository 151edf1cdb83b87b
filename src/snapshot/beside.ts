/**
 * findPreviousSnapshot: what `svc-snapshot --diff-previous` compares a fresh
 * snapshot with (docs/diff.md); checkPrevious: a `--previous` given
 * that is not older than the snapshot (refused) or of another site (warned).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isValid } from 'date-fns/isValid';
import { parse } from 'date-fns/parse';
import { parseISO } from 'date-fns/parseISO';
import { sameSite } from '../config/url.js';
import { UsageError } from '../errors.js';
import { openSnapshot, type Snapshot } from './dir.js';

const NAME_DATE = /(\d{4}-\d{2}-\d{2})/;

/** A `YYYY-MM-DD` as the start of that local day, in epoch ms. */
function dayStart(date: string | undefined): number | undefined {
  if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const d = parse(date, 'yyyy-MM-dd', new Date(2000, 0, 1));
  return isValid(d) ? d.getTime() : undefined;
}

/** When a snapshot was taken: the manifest's `time`, else its `date`, else the date in the directory name. */
function snapshotTime(
  name: string,
  manifest: { readonly time?: string; readonly date?: string } | undefined,
): number | undefined {
  if (manifest?.time !== undefined) {
    const t = parseISO(manifest.time);
    if (isValid(t)) return t.getTime();
  }
  return dayStart(manifest?.date) ?? dayStart(NAME_DATE.exec(name)?.[1]);
}

/** The new snapshot as its caller knows it: its manifest is not written yet while it is in staging. */
export interface OwnSnapshot {
  readonly time: string;
  /** Its manifest's `baseUrl`: the site it is of. */
  readonly baseUrl: string;
}

interface Candidate {
  readonly name: string;
  readonly time: number;
  readonly baseUrl: string;
  /** The manifest's `date`, as a person reads the night. */
  readonly date: string;
}

/** The nights beside a snapshot: the one before it, and the newest of its site when that is newer (a re-run). */
export interface PreviousBeside {
  readonly dir: string | undefined;
  /** An older snapshot of another site newer than `dir` (or any, when there is no `dir`): the newest such. */
  readonly otherSite?: { readonly dir: string; readonly baseUrl: string };
  /** The newest snapshot of the same site taken after this one: this one is then a re-run. */
  readonly newer?: { readonly dir: string; readonly date: string };
}

/**
 * The nights beside `outDir` (same parent), found by their manifests whatever
 * the directories are called: the newest snapshot older than `outDir` of the
 * same site (its manifest's `baseUrl` the same once normalised), and the
 * newest one of the same site taken after it. Several sites' snapshots may
 * share a parent (one cron job each): another site's night compared with
 * this one would be all changes. Not candidates: `outDir` itself, dot
 * directories (temporary and backup ones), directories without a readable
 * `_snapshot-manifest.json` (raw and audit collections among them), an
 * incomplete snapshot, and one taken at the same time (the same night
 * again). `own` gives the new snapshot's time and site when its manifest is
 * not written yet; when neither tells them, every candidate counts as older
 * and of the same site.
 */
export async function previousSnapshotBeside(outDir: string, own?: OwnSnapshot): Promise<PreviousBeside> {
  const target = resolve(outDir);
  const parent = dirname(target);
  const self = basename(target);
  const manifest = own ?? (await openSnapshot(target).catch(() => undefined))?.manifest;
  const reference = snapshotTime(self, manifest) ?? Infinity;
  const site = manifest?.baseUrl;
  let same: Candidate | undefined;
  let other: Candidate | undefined;
  let newest: Candidate | undefined;
  for (const c of await candidates(parent, self)) {
    const ours = site === undefined || sameSite(c.baseUrl, site);
    if (c.time > reference) {
      if (ours) newest = newer(newest, c);
    } else if (c.time < reference) {
      if (ours) same = newer(same, c);
      else other = newer(other, c);
    }
  }
  const dir = same && join(parent, same.name);
  const after = newest && { newer: { dir: join(parent, newest.name), date: newest.date } };
  if (!other || (same && newer(same, other) === same)) return { dir, ...after };
  return { dir, otherSite: { dir: join(parent, other.name), baseUrl: other.baseUrl }, ...after };
}

/** findPreviousSnapshot: the previous snapshot's directory (previousSnapshotBeside). */
export async function findPreviousSnapshot(outDir: string, own?: OwnSnapshot): Promise<string | undefined> {
  return (await previousSnapshotBeside(outDir, own)).dir;
}

/** The newer of two candidates: by time, then by name (the order of the directories is the file system's). */
function newer(a: Candidate | undefined, b: Candidate): Candidate {
  return !a || b.time > a.time || (b.time === a.time && b.name > a.name) ? b : a;
}

/** Every complete snapshot directory in `parent` but `self`, whatever its name, with its time and site. */
async function candidates(parent: string, self: string): Promise<Candidate[]> {
  let entries: string[];
  try {
    entries = await readdir(parent);
  } catch {
    return [];
  }
  const out: Candidate[] = [];
  for (const name of entries) {
    if (name === self || name.startsWith('.')) continue;
    const path = join(parent, name);
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) continue;
    const manifest = (await openSnapshot(path).catch(() => undefined))?.manifest;
    if (manifest === undefined || !manifest.complete) continue;
    const time = snapshotTime(name, manifest);
    if (time === undefined) continue;
    out.push({ name, time, baseUrl: manifest.baseUrl, date: manifest.date });
  }
  return out;
}

/**
 * `--previous <dir>` (findings, report, notify) is the night before: one
 * taken after the snapshot, or at the same time (which findPreviousSnapshot
 * never takes either), would tell every state backwards (what went away
 * `new`, `firstSeen` wrong), so it is a usage error, before anything is read
 * further, written or sent. One of another site (as findPreviousSnapshot
 * tells sites) is told against all the same, since it was asked for by name,
 * with a warning: every finding would be `new` and the other site's
 * `resolved`. A previous that cannot be opened, or either time that cannot be
 * read, is left to the command, as before.
 */
export async function checkPrevious(
  snapshot: Snapshot,
  previousDir: string,
  warn: (message: string) => void,
): Promise<void> {
  const previous = (await openSnapshot(previousDir).catch(() => undefined))?.manifest;
  if (previous === undefined) return;
  const own = snapshotTime('', { time: snapshot.manifest.time });
  const before = snapshotTime('', { time: previous.time });
  if (own !== undefined && before !== undefined && !(before < own)) {
    const when =
      before === own
        ? `at the same time as ${snapshot.dir} (${snapshot.manifest.time}), so it is no night before`
        : `at ${previous.time}, after ${snapshot.dir} (${snapshot.manifest.time})`;
    throw new UsageError(`--previous ${previousDir} was taken ${when}: give an older snapshot as --previous`);
  }
  if (!sameSite(previous.baseUrl, snapshot.manifest.baseUrl))
    warn(
      `--previous ${previousDir} is a snapshot of ${previous.baseUrl}, not of ${snapshot.manifest.baseUrl}: ` +
        "every finding is told against another site's",
    );
}

/**
 * A re-run: a night older than the newest night of its site (running night 2
 * again after night 3). It is published as usual and told against its own
 * night before, says so in the summary, the report and the digest, and sends
 * nothing to Alertmanager: the newest night already said what is firing.
 */
export interface Rerun {
  /** The re-run night's date (`YYYY-MM-DD`). */
  readonly of: string;
  /** The newest night's date. */
  readonly newer: string;
}

/** What every text form says of a re-run, right after its verdict or heading. */
export function rerunText(r: Rerun): string {
  return `re-run of ${r.of}: ${r.newer} is newer`;
}
