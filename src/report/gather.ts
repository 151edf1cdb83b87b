/**
 * The report's model, gathered: from a published snapshot directory
 * (`svc-snapshot report`, every export file read once and checked against
 * the manifest's sha256 as it is read: an edited export is refused, exit 1), or
 * from a snapshot's staging directory and the manifest about to be written
 * (`--format html`). The exports shown are the manifest's and the export
 * catalog's: a new export appears without code here.
 */
import type { Rerun } from '../snapshot/beside.js';
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { diffWithSnapshot } from '../diff/index.js';
import { findPreviousSnapshot } from '../snapshot/beside.js';
import {
  DEFAULT_EXPIRING_DAYS,
  evaluateFindings,
  type EvaluateOptions,
  type FindingsReport,
} from '../findings/evaluate.js';
import { compareText } from '../findings/define.js';
import { findingsOf, overTime } from '../findings/index.js';
import { findingsFileOf, previousFindingsOf, previousOrWarn, type PreviousFindings } from '../findings/lifecycle.js';
import { previousFromHistory, type HistorySource } from '../history/previous-findings.js';
import type { WaiversFile } from '../findings/waivers.js';
import { exportsRead, RULES } from '../findings/catalog.js';
import { DISPLAY_READS } from '../findings/display.js';
import { openHistory } from '../history/engine.js';
import { listRuns } from '../history/query.js';
import { normaliseSite } from '../config/url.js';
import type { SnapshotManifest } from '../manifests.js';
import type { ExportRecord } from '../exports/types.js';
import { openSnapshot, SNAPSHOT_MANIFEST, stagedSnapshot, type ManifestEntry, type Snapshot } from '../snapshot/dir.js';
import { openNight, type OpenedNight } from '../snapshot/open.js';
import { manifestSignature } from '../sign/manifest-signature.js';
import type { SigningKey } from '../sign/key.js';
import type { ReportManifest, ReportModel, TrendNight, VmStates } from './model.js';

/** The exports that hold VMs (`--include vms`), and the columns that may hold a VM's state, first found wins. */
const VM_EXPORTS = ['active_vms', 'vm_configs'] as const;
const STATE_COLUMNS = ['state', 'status', 'powerState', 'power_state'] as const;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The nights of the history database for this site, the snapshot's own night added when it is not loaded yet. */
async function historyNights(source: HistorySource, manifest: ReportManifest, strict: boolean): Promise<TrendNight[]> {
  const own: TrendNight = {
    time: manifest.time,
    date: manifest.date,
    counts: Object.fromEntries(manifest.exports.filter((e) => e.available).map((e) => [e.export, e.count])),
  };
  // A snapshot's first night: its load, after publishing, creates the database.
  if (!strict && source.target.engine === 'sqlite' && !existsSync(source.target.path)) return [own];
  const db = await openHistory(source.target, { mustExist: true, ...(source.ca ? { ca: source.ca } : {}) });
  try {
    const runs = await listRuns(db, normaliseSite(manifest.baseUrl));
    const nights: TrendNight[] = runs.map((r) => ({ time: r.time, date: r.date, counts: r.counts }));
    if (!nights.some((n) => n.time === manifest.time)) nights.push(own);
    return nights.sort((a, b) => compareText(a.time, b.time));
  } finally {
    await db.close();
  }
}

async function historyPart(
  source: HistorySource | undefined,
  manifest: ReportManifest,
  strict: boolean,
): Promise<ReportModel['history']> {
  if (!source) return undefined;
  try {
    return { label: source.target.label, nights: await historyNights(source, manifest, strict) };
  } catch (err) {
    if (strict) throw err;
    return { label: source.target.label, problem: messageOf(err) };
  }
}

/**
 * A VM export's states, counted as its records are parsed (none of them
 * kept: a large export's records would raise the report's peak): by the
 * first state column its records hold; undefined when they hold none.
 */
function vmStates(snapshot: Snapshot, entry: ManifestEntry, bytes: Buffer): VmStates | undefined {
  const counts = STATE_COLUMNS.map(() => new Map<string, number>());
  const held = STATE_COLUMNS.map(() => false);
  const none = {};
  snapshot.parse(entry, bytes, (r) => {
    STATE_COLUMNS.forEach((c, k) => {
      const v = r[c];
      if (v !== undefined) held[k] = true;
      const key = v === null || v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v);
      counts[k]!.set(key, (counts[k]!.get(key) ?? 0) + 1);
    });
    return none;
  });
  const k = held.indexOf(true);
  if (k < 0) return undefined;
  return {
    export: entry.export,
    column: STATE_COLUMNS[k]!,
    counts: [...counts[k]!].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0])),
  };
}

/** The exports whose ids the page shows by name, and the columns the name is read from. */
const NAME_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  users: ['id', 'firstName', 'lastName', 'email'],
  teams: ['id', 'name'],
  projects: ['id', 'name'],
  security_levels: ['id', 'name'],
  security_requirements: ['id', 'name'],
};

const trimmed = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/** A record's name as a person reads it: a user's full name, else the e-mail; anything else's `name`. */
function nameOf(exportName: string, r: ExportRecord): string {
  if (exportName !== 'users') return trimmed(r.name);
  const full = `${trimmed(r.firstName)} ${trimmed(r.lastName)}`.trim();
  return full !== '' ? full : trimmed(r.email);
}

/** Each record's id → its name, for the exports of NAME_COLUMNS (the first record of an id wins). */
function addNames(names: Map<string, string>, exportName: string, records: readonly ExportRecord[]): void {
  for (const r of records) {
    const name = nameOf(exportName, r);
    if (typeof r.id === 'string' && name !== '' && !names.has(r.id)) names.set(r.id, name);
  }
}

/**
 * What the page reads of each available export file, given its bytes as
 * they are read (each file is read once, for the diff or else for these
 * readers alone, and handed to every reader in turn): the columns the
 * findings' rules read, the VMs' states, and with `withNames` the names of
 * the ids the page's changes show (NAME_COLUMNS).
 */
function exportReaders(snapshot: Snapshot, findings: boolean, withNames = false) {
  const columns = findings
    ? exportsRead([...RULES.flatMap((r) => r.reads), ...DISPLAY_READS])
    : new Map<string, Set<string>>();
  const records = new Map<string, ExportRecord[]>();
  const states = new Map<string, VmStates>();
  const names = new Map<string, string>();
  const use = (entry: ManifestEntry, bytes: Buffer): void => {
    const wanted = columns.get(entry.export);
    if (wanted) records.set(entry.export, snapshot.parse(entry, bytes, [...wanted]));
    const nameColumns = NAME_COLUMNS[entry.export];
    if (withNames && nameColumns)
      addNames(
        names,
        entry.export,
        wanted && nameColumns.every((c) => wanted.has(c))
          ? records.get(entry.export)!
          : snapshot.parse(entry, bytes, [...nameColumns]),
      );
    if (!(VM_EXPORTS as readonly string[]).includes(entry.export)) return;
    const vms = vmStates(snapshot, entry, bytes);
    if (vms) states.set(entry.export, vms);
  };
  // In VM_EXPORTS' order, whatever the order the files were read in.
  const vms = () => VM_EXPORTS.flatMap((name) => states.get(name) ?? []);
  return { use, records, vms, names };
}

export interface DirectoryOptions {
  /** --findings-inherit-levels (default true): the reading of the security levels the page's findings take. */
  readonly inheritLevels?: boolean;
  /** --expiring-days and --waivers: the findings over time (docs/findings.md). */
  readonly expiringDays?: number;
  readonly waivers?: WaiversFile;
  /** A previous snapshot found beside that cannot be read for its findings: said, not fatal. */
  readonly warn?: (message: string) => void;
  /** `--previous`: compared with this directory (its problems are the command's); otherwise the newest older one beside the snapshot, if any. */
  readonly previous?: string;
  readonly history?: HistorySource;
}

/** `svc-snapshot report <dir>`: everything read from the published snapshot, each export file once; a damaged one is refused. */
export async function modelOfDirectory(snapshot: Snapshot, opts: DirectoryOptions): Promise<ReportModel> {
  const { dir } = snapshot;
  const manifest = snapshot.manifest;
  // The signature's own validity only: who may sign is verify's --allowed-signers question.
  const signature = await manifestSignature(
    dir,
    SNAPSHOT_MANIFEST,
    snapshot.manifestBytes!,
    undefined,
    new Date(manifest.time),
  );
  const readers = exportReaders(snapshot, true, true);
  const evaluate = { inheritLevels: opts.inheritLevels ?? true, expiringDays: opts.expiringDays };
  const given = opts.previous;
  const warn = opts.warn ?? (() => {});
  const findings = async (before: PreviousFindings | undefined) => {
    const evaluated = await evaluateFindings(manifest, async (name) => readers.records.get(name)!, evaluate);
    const previous =
      before ??
      (opts.history ? await previousFromHistory(opts.history, manifest.baseUrl, manifest.time, warn) : undefined);
    return overTime(evaluated, previous, {
      expiringDays: opts.expiringDays ?? DEFAULT_EXPIRING_DAYS,
      waivers: opts.waivers,
    });
  };
  const older = given ?? (await findPreviousSnapshot(dir, manifest));
  const nights = await bothNights(snapshot, readers, { older, given: given !== undefined, evaluate, warn, findings });
  return modelOf(manifest, signature, nights, readers, await historyPart(opts.history, manifest, true));
}

/**
 * The comparison with the older night, if any, and the findings told
 * against that night's: every export file of the snapshot read once (by the
 * comparison, else after it) and handed to `readers`.
 */
async function bothNights(
  snapshot: Snapshot,
  readers: ReturnType<typeof exportReaders>,
  o: {
    older: string | undefined;
    given: boolean;
    evaluate: EvaluateOptions;
    warn: (message: string) => void;
    findings: (before: PreviousFindings | undefined) => Promise<FindingsReport>;
  },
) {
  const night =
    o.older === undefined ? undefined : await olderNight(o.older, snapshot, readers.use, o.evaluate, !o.given);
  const previous = night?.compared ?? { problem: 'there is no older snapshot beside this one' };
  // The files the diff did not read (no older snapshot, or a failed comparison), and every other one checked (an edited one: exit 1).
  await snapshot.checkRest(readers.use);
  const before = night && (o.given ? await night.findings() : await previousOrWarn(night.findings, o.older!, o.warn));
  return { previous, report: await o.findings(before) };
}

function modelOf(
  manifest: ReportManifest,
  signature: ReportModel['signature'],
  nights: { previous: ReportModel['previous']; report: FindingsReport },
  readers: ReturnType<typeof exportReaders>,
  history: ReportModel['history'] | undefined,
): ReportModel & { readonly findings: { readonly report: FindingsReport } } {
  return {
    manifest,
    signature,
    findings: { report: nights.report },
    previous: nights.previous,
    history,
    vms: readers.vms(),
    names: readers.names,
  };
}

/**
 * The older night, opened once: compared with the snapshot, and its
 * findings (its `_findings.json`, else the rules over the columns its export
 * files gave as the comparison read them, the others read after). Its
 * problems are the command's when it was given (`found` false); when it was
 * found beside, a failed comparison is said on the page and its findings'
 * failure is the caller's to warn of.
 */
async function olderNight(
  dir: string,
  newer: Snapshot,
  use: (entry: ManifestEntry, bytes: Buffer) => void,
  evalOpts: EvaluateOptions,
  found: boolean,
): Promise<{ compared: ReportModel['previous']; findings: () => Promise<PreviousFindings> }> {
  const failed = (err: unknown) => ({ problem: `the comparison with ${basename(dir)} failed: ${messageOf(err)}` });
  let night: OpenedNight;
  try {
    night = await openNight(resolve(dir));
  } catch (err) {
    if (!found) throw err;
    return { compared: failed(err), findings: () => Promise.reject(err as Error) };
  }
  const opened = night.snapshot;
  const file = opened ? await findingsFileOf(opened).catch((e: unknown) => e as Error) : undefined;
  const olderReaders = opened && file === undefined ? exportReaders(opened, true) : undefined;
  let compared: ReportModel['previous'];
  try {
    compared = { name: basename(dir), changes: await diffWithSnapshot(night, newer, use, olderReaders?.use) };
  } catch (err) {
    if (!found) throw err;
    compared = failed(err);
  }
  const findings = async (): Promise<PreviousFindings> => {
    if (file instanceof Error) throw file;
    if (file) return file;
    // A raw collection given as --previous has no findings: openSnapshot says so.
    if (!opened || !olderReaders) return previousFindingsOf(await openSnapshot(dir), findingsOf, evalOpts);
    await opened.checkRest(olderReaders.use);
    const report = await evaluateFindings(opened.manifest, async (name) => olderReaders.records.get(name)!, evalOpts);
    olderReaders.records.clear();
    return { night: { time: report.time, source: 'snapshot' }, findings: report.findings };
  };
  return { compared, findings };
}

export interface StagingOptions {
  /** Where the snapshot is being published: its neighbours hold the previous snapshot. */
  readonly outDir: string;
  /** The snapshot's findings told against the night before's, when there are any (the rules are evaluated first: findingsOf a staged snapshot). */
  readonly findings: (previous: PreviousFindings | undefined) => Promise<FindingsReport>;
  /** The rules' settings, for a night before without `_findings.json`. */
  readonly evaluate: EvaluateOptions;
  /** A night before whose findings cannot be read: said, not fatal. */
  readonly warn: (message: string) => void;
  readonly signKey?: SigningKey;
  readonly history?: HistorySource;
  /** The snapshot is a re-run: the page says so. */
  readonly rerun?: Rerun;
}

/**
 * `--findings` with `--diff-previous` or `--notify` (no page): the comparison
 * of the snapshot in staging with the newest older one beside it, and the
 * findings told against that night's, its files read once.
 */
export async function nightsOfStaging(
  stagingDir: string,
  manifest: SnapshotManifest,
  opts: Pick<StagingOptions, 'outDir' | 'findings' | 'evaluate' | 'warn'>,
): Promise<{ previous: ReportModel['previous']; report: FindingsReport }> {
  const older = await findPreviousSnapshot(opts.outDir, manifest);
  // Nothing to compare with: the files just written need not be read for it.
  if (older === undefined)
    return { previous: { problem: 'no older snapshot' }, report: await opts.findings(undefined) };
  const snapshot = stagedSnapshot(stagingDir, manifest);
  return bothNights(snapshot, exportReaders(snapshot, false), { older, given: false, ...opts });
}

/** `--format html`: the exports just written into staging and the manifest about to be written. */
export async function modelOfStaging(
  stagingDir: string,
  manifest: SnapshotManifest,
  opts: StagingOptions,
): Promise<ReportModel & { readonly findings: { readonly report: FindingsReport } }> {
  const snapshot = stagedSnapshot(stagingDir, manifest);
  const readers = exportReaders(snapshot, false, true);
  const signature = opts.signKey
    ? {
        state: 'signed',
        key: opts.signKey.fingerprint,
        reason: 'the manifest is signed as it is written, after this page',
      }
    : { state: 'unsigned', key: null };
  const older = await findPreviousSnapshot(opts.outDir, manifest);
  const nights = await bothNights(snapshot, readers, { older, given: false, ...opts });
  return modelOf(manifest, signature, nights, readers, await historyPart(opts.history, manifest, false));
}
