/**
 * The report's model, gathered: from a published snapshot directory
 * (`svc-snapshot report`, every export file checked against the manifest's
 * sha256 as the findings read it: an edited export is refused, exit 1), or
 * from a snapshot's staging directory and the manifest about to be written
 * (`--format html`). The exports shown are the manifest's and the export
 * catalog's: a new export appears without code here.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { diffDirectories, diffWithUnwritten, findPreviousSnapshot, type ChangeSet } from '../diff/index.js';
import type { FindingsReport } from '../findings/evaluate.js';
import { findingsOf } from '../findings/index.js';
import { openHistory } from '../history/engine.js';
import { listRuns, normaliseSite } from '../history/query.js';
import type { HistoryTarget } from '../history/target.js';
import type { SnapshotManifest } from '../exports/manifest.js';
import type { ExportRecord } from '../exports/types.js';
import { openSnapshot, SNAPSHOT_MANIFEST, stagedSnapshot, type ManifestEntry } from '../snapshot/dir.js';
import { manifestSignature } from '../sign/manifest-signature.js';
import type { SigningKey } from '../sign/key.js';
import type { ReportManifest, ReportModel, TrendNight, VmStates } from './model.js';

/** The exports that hold VMs (`--include vms`), and the columns that may hold a VM's state, first found wins. */
const VM_EXPORTS = ['active_vms', 'vm_configs'] as const;
const STATE_COLUMNS = ['state', 'status', 'powerState', 'power_state'] as const;

export interface HistorySource {
  readonly target: HistoryTarget;
  readonly ca?: readonly string[];
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The nights of the history database for this site, the snapshot's own night added when it is not loaded yet. */
async function historyNights(source: HistorySource, manifest: ReportManifest, strict: boolean): Promise<TrendNight[]> {
  const own: TrendNight = { time: manifest.time, date: manifest.date, counts: Object.fromEntries(manifest.exports.filter((e) => e.available).map((e) => [e.export, e.count])) };
  // A snapshot's first night: its load, after publishing, creates the database.
  if (!strict && source.target.engine === 'sqlite' && !existsSync(source.target.path)) return [own];
  const db = await openHistory(source.target, { mustExist: true, ...(source.ca ? { ca: source.ca } : {}) });
  try {
    const runs = await listRuns(db, normaliseSite(manifest.baseUrl));
    const nights: TrendNight[] = runs.map((r) => ({ time: r.time, date: r.date, counts: r.counts }));
    if (!nights.some((n) => n.time === manifest.time)) nights.push(own);
    return nights.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  } finally {
    await db.close();
  }
}

async function historyPart(source: HistorySource | undefined, manifest: ReportManifest, strict: boolean): Promise<ReportModel['history']> {
  if (!source) return undefined;
  try {
    return { label: source.target.label, nights: await historyNights(source, manifest, strict) };
  } catch (err) {
    if (strict) throw err;
    return { label: source.target.label, problem: messageOf(err) };
  }
}

/** The VMs' states, only for the VM exports the manifest lists as available. */
async function vmStates(exports: readonly ManifestEntry[], read: (e: ManifestEntry) => Promise<readonly ExportRecord[]>): Promise<VmStates[] | undefined> {
  const out: VmStates[] = [];
  for (const name of VM_EXPORTS) {
    const entry = exports.find((e) => e.export === name && e.available);
    if (!entry) continue;
    const records = await read(entry);
    const column = STATE_COLUMNS.find((c) => records.some((r) => r[c] !== undefined));
    if (column === undefined) continue;
    const counts = new Map<string, number>();
    for (const r of records) {
      const v = r[column];
      const key = v === null || v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    out.push({ export: name, column, counts: [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) });
  }
  return out.length > 0 ? out : undefined;
}

export interface DirectoryOptions {
  /** --findings-inherit-levels (default true): the reading of the security levels the page's findings take. */
  readonly inheritLevels?: boolean;
  /** `--previous`: compared with this directory (its problems are the command's); otherwise the newest older one beside the snapshot, if any. */
  readonly previous?: string;
  readonly history?: HistorySource;
}

/** `svc-snapshot report <dir>`: everything read from the published snapshot; a damaged one is refused. */
export async function modelOfDirectory(dir: string, opts: DirectoryOptions): Promise<ReportModel> {
  // The findings read every export file, each checked against the manifest's sha256 (an edited one: exit 1).
  const snapshot = await openSnapshot(dir);
  const manifest = snapshot.manifest;
  const report = await findingsOf(snapshot, { inheritLevels: opts.inheritLevels ?? true });
  // The signature's own validity only: who may sign is verify's --allowed-signers question.
  const signature = await manifestSignature(dir, SNAPSHOT_MANIFEST, snapshot.manifestBytes!, undefined, new Date(manifest.time));
  let previous: ReportModel['previous'];
  if (opts.previous !== undefined) {
    previous = { name: basename(opts.previous), changes: await diffDirectories(opts.previous, dir) };
  } else {
    previous = await besidePrevious(dir, undefined, (older) => diffDirectories(older, dir));
  }
  const vms = await vmStates(manifest.exports, (e) => snapshot.records(e));
  const history = await historyPart(opts.history, manifest, true);
  return { manifest, signature, findings: { report }, previous, ...(history ? { history } : {}), ...(vms ? { vms } : {}) };
}

/** The newest older snapshot beside `dir`, compared; its absence or a failed comparison is said on the page, not fatal. */
async function besidePrevious(dir: string, ownTime: string | undefined, diff: (older: string) => Promise<ChangeSet>): Promise<ReportModel['previous']> {
  const older = await findPreviousSnapshot(dir, ownTime);
  if (older === undefined) return { problem: 'there is no older snapshot beside this one' };
  try {
    return { name: basename(older), changes: await diff(older) };
  } catch (err) {
    return { problem: `the comparison with ${basename(older)} failed: ${messageOf(err)}` };
  }
}

export interface StagingOptions {
  /** Where the snapshot is being published: its neighbours hold the previous snapshot. */
  readonly outDir: string;
  /** The findings, evaluated over the export files just written (findingsOfStaging). */
  readonly findings: FindingsReport;
  readonly signKey?: SigningKey;
  readonly history?: HistorySource;
}

/** `--format html`: the exports just written into staging and the manifest about to be written. */
export async function modelOfStaging(stagingDir: string, manifest: SnapshotManifest, opts: StagingOptions): Promise<ReportModel> {
  const snapshot = stagedSnapshot(stagingDir, manifest);
  const report = opts.findings;
  const signature = opts.signKey ? { state: 'signed', key: opts.signKey.fingerprint, reason: 'the manifest is signed as it is written, after this page' } : { state: 'unsigned', key: null };
  const previous = await besidePrevious(opts.outDir, manifest.time, (older) => diffWithUnwritten(older, { dir: stagingDir, manifest }));
  const vms = await vmStates(manifest.exports, (e) => snapshot.records(e));
  const history = await historyPart(opts.history, manifest, false);
  return { manifest, signature, findings: { report }, previous, ...(history ? { history } : {}), ...(vms ? { vms } : {}) };
}
