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
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';

const SNAPSHOT_DIR = /^svc-snapshot-/;
/** Raw collections and audit collections share the prefix; they are not snapshots. */
const OTHER_DIR = /^svc-snapshot-(raw|audit)-/;
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
}

/** The previous snapshot beside a new one, and the newest older one passed over for being of another site. */
export interface PreviousBeside {
  readonly dir: string | undefined;
  /** An older snapshot of another site newer than `dir` (or any, when there is no `dir`): the newest such. */
  readonly otherSite?: { readonly dir: string; readonly baseUrl: string };
}

/**
 * The newest `svc-snapshot-*` directory beside `outDir` (same parent) that
 * is older than `outDir`, by manifest `time` (falling back to the date in its
 * name), and of the same site: its manifest's `baseUrl` the same as the new
 * snapshot's once normalised as the history database keys a site. Several
 * sites' snapshots may share a parent (one cron job each): another site's
 * night compared with this one would be all changes. Skipped: `outDir`
 * itself, raw (`svc-snapshot-raw-*`) and audit (`svc-snapshot-audit-*`)
 * directories, temporary and backup dot-directories, and directories without
 * a valid `_snapshot-manifest.json`. `own` gives the new snapshot's time and
 * site when its manifest is not written yet; when neither tells them, every
 * candidate counts as older and of the same site.
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
  for (const c of await olderCandidates(parent, self, reference)) {
    if (site === undefined || sameSite(c.baseUrl, site)) same = newer(same, c);
    else other = newer(other, c);
  }
  const dir = same && join(parent, same.name);
  if (!other || (same && newer(same, other) === same)) return { dir };
  return { dir, otherSite: { dir: join(parent, other.name), baseUrl: other.baseUrl } };
}

/** findPreviousSnapshot: the previous snapshot's directory (previousSnapshotBeside). */
export async function findPreviousSnapshot(outDir: string, own?: OwnSnapshot): Promise<string | undefined> {
  return (await previousSnapshotBeside(outDir, own)).dir;
}

/** The newer of two candidates: by time, then by name (the order of the directories is the file system's). */
function newer(a: Candidate | undefined, b: Candidate): Candidate {
  return !a || b.time > a.time || (b.time === a.time && b.name > a.name) ? b : a;
}

/** Every snapshot directory in `parent` but `self` taken before `reference`, with its site. */
async function olderCandidates(parent: string, self: string, reference: number): Promise<Candidate[]> {
  let entries: string[];
  try {
    entries = await readdir(parent);
  } catch {
    return [];
  }
  const out: Candidate[] = [];
  for (const name of entries) {
    if (name === self || !SNAPSHOT_DIR.test(name) || OTHER_DIR.test(name)) continue;
    const path = join(parent, name);
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) continue;
    const manifest = (await openSnapshot(path).catch(() => undefined))?.manifest;
    if (manifest === undefined) continue;
    const time = snapshotTime(name, manifest);
    if (time === undefined || !(time < reference)) continue;
    out.push({ name, time, baseUrl: manifest.baseUrl });
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
