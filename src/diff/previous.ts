/**
 * findPreviousSnapshot: what `svc-snapshot --diff-previous` compares a fresh
 * snapshot with (CONTRACT section 9).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isValid } from 'date-fns/isValid';
import { parse } from 'date-fns/parse';
import { parseISO } from 'date-fns/parseISO';
import { openSnapshot } from '../snapshot/dir.js';

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

/**
 * The newest `svc-snapshot-*` directory beside `outDir` (same parent) that
 * is older than `outDir`, by manifest `time` (falling back to the date in its
 * name). Skipped: `outDir` itself, raw (`svc-snapshot-raw-*`) and audit
 * (`svc-snapshot-audit-*`) directories, temporary and backup dot-directories,
 * and directories without a valid `_snapshot-manifest.json`. When the time of
 * `outDir` cannot be told, every candidate counts as older.
 */
export async function findPreviousSnapshot(outDir: string, ownTime?: string): Promise<string | undefined> {
  const target = resolve(outDir);
  const parent = dirname(target);
  const self = basename(target);
  // A snapshot still in staging (its report) gives its time: outDir is not written yet.
  const own = ownTime !== undefined ? { time: ownTime } : (await openSnapshot(target).catch(() => undefined))?.manifest;
  const reference = snapshotTime(self, own) ?? Infinity;
  let entries: string[];
  try {
    entries = await readdir(parent);
  } catch {
    return undefined;
  }
  let best: { name: string; time: number } | undefined;
  for (const name of entries) {
    if (name === self || !SNAPSHOT_DIR.test(name) || OTHER_DIR.test(name)) continue;
    const path = join(parent, name);
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) continue;
    const manifest = (await openSnapshot(path).catch(() => undefined))?.manifest;
    if (manifest === undefined) continue;
    const time = snapshotTime(name, manifest);
    if (time === undefined || !(time < reference)) continue;
    if (!best || time > best.time || (time === best.time && name > best.name)) best = { name, time };
  }
  return best ? join(parent, best.name) : undefined;
}
