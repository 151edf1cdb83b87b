/**
 * What the report shows (README.md, "The report"), as data gathered from the
 * snapshot and its neighbours. render.ts turns it into the page with no I/O,
 * so the same model gives the same bytes.
 */
import type { Rerun } from '../snapshot/beside.js';
import type { ChangeSet } from '../diff/types.js';
import type { FindingsReport } from '../findings/evaluate.js';
import type { ReadableManifest } from '../manifests.js';

/** What the report reads of `_snapshot-manifest.json`, as its one schema types it. */
export type ReportManifest = Pick<
  ReadableManifest,
  'baseUrl' | 'time' | 'date' | 'source' | 'tool' | 'complete' | 'exports' | 'nullFields' | 'validation' | 'drift'
>;

interface ReportSignature {
  /** valid, unsigned, invalid, not allowed; or `signed` for a snapshot that signs its manifest after the page is written. */
  readonly state: string;
  readonly key: string | null;
  readonly reason?: string;
}

/** One night of the history database: its time and the records per export. */
export interface TrendNight {
  readonly time: string;
  readonly date: string;
  readonly counts: Readonly<Record<string, number>>;
}

/** The VMs' states: per export holding VMs, the records per value of its state column. */
export interface VmStates {
  readonly export: string;
  readonly column: string;
  readonly counts: ReadonlyArray<readonly [string, number]>;
}

export interface ReportModel {
  readonly manifest: ReportManifest;
  readonly signature: ReportSignature;
  /** The findings, or why they could not be evaluated. */
  readonly findings: { readonly report: FindingsReport } | { readonly problem: string };
  /** The previous snapshot: its name and the change set, or why there is none. */
  readonly previous: { readonly name: string; readonly changes: ChangeSet } | { readonly problem: string };
  /** With a history database: the nights loaded (oldest first), or why they could not be read. */
  readonly history?:
    | { readonly label: string; readonly nights: readonly TrendNight[] }
    | { readonly label: string; readonly problem: string };
  /** Of the VM exports the snapshot has (`--include vms`): none without. */
  readonly vms?: readonly VmStates[];
  /** The ids of users, teams, projects, security levels and requirements → their names, for the changes. */
  readonly names?: ReadonlyMap<string, string>;
  /** A night older than the newest of its site. */
  readonly rerun?: Rerun;
}
