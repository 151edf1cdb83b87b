/**
 * The change set of `svc-snapshot diff` (docs/diff.md). This is also
 * the `--json` output; docs/diff-schema.json describes it and docs/diff.md
 * explains it. Change one only together with the other two.
 */
import type { ExportRecord } from '../exports/types.js';
import type { Include } from '../includes.js';

export const DIFF_SCHEMA_VERSION = 1;

/** One of the two directories compared. */
export interface DiffSide {
  /** Absolute path as given (resolved against the working directory). */
  readonly dir: string;
  /** A snapshot directory, or a raw collection that was built first. */
  readonly kind: 'snapshot' | 'collection';
  readonly baseUrl: string | null;
  /** The manifest's `time` (ISO 8601 UTC) and `date` (YYYY-MM-DD). */
  readonly time: string | null;
  readonly date: string | null;
}

/** Whether an export was available on each side. */
export type Availability = 'both' | 'older-only' | 'newer-only' | 'neither';

interface ExportSideInfo {
  readonly available: boolean;
  /** Number of records on that side (0 when unavailable). */
  readonly count: number;
  /** Why it is unavailable, or what is missing from it ("incomplete: …"). */
  readonly reason?: string;
}

export interface ColumnChange {
  readonly column: string;
  readonly old: unknown;
  readonly new: unknown;
}

export interface ChangedRecord {
  /** The record's key columns and values, e.g. `{ "teamID": "t1", "memberID": "u7" }`. */
  readonly key: Record<string, unknown>;
  /** The columns that changed, in column order. */
  readonly changes: ColumnChange[];
}

export interface ExportDiff {
  readonly export: string;
  /** The key columns records are matched by. */
  readonly key: readonly string[];
  readonly availability: Availability;
  readonly older: ExportSideInfo;
  readonly newer: ExportSideInfo;
  /** True when records were added, removed or changed, or availability differs. */
  readonly hasChanges: boolean;
  /** Columns not compared because they are unobtainable on either side (manifest `nullFields`, or absent from a side's file). */
  readonly unobtainable: string[];
  /** Columns not compared because of `--ignore` (or the default volatile list). */
  readonly ignored: string[];
  readonly counts: {
    readonly added: number;
    readonly removed: number;
    readonly changed: number;
    readonly unchanged: number;
  };
  /** Records only in newer, whole, in newer's file order. */
  readonly added: ExportRecord[];
  /** Records only in older, whole, in older's file order. */
  readonly removed: ExportRecord[];
  /** Records in both whose compared columns differ, in newer's file order. */
  readonly changed: ChangedRecord[];
}

export interface ChangeSet {
  readonly command: 'diff';
  readonly schemaVersion: typeof DIFF_SCHEMA_VERSION;
  readonly older: DiffSide;
  readonly newer: DiffSide;
  /** True when anything changed (exit 5). */
  readonly hasChanges: boolean;
  /** The effective ignore list: `column` (every export) or `export.column`. */
  readonly ignore: string[];
  readonly totals: {
    readonly added: number;
    readonly removed: number;
    readonly changed: number;
    readonly exportsChanged: number;
  };
  /** The compared exports, in catalog order. */
  readonly exports: ExportDiff[];
}

/** A snapshot's export file, read and not parsed yet. */
export interface ExportFile {
  readonly bytes: Buffer;
  /** The manifest's count of its records. */
  readonly count: number;
  /** Its records, the whole file parsed; throws FailedError (exit 1) naming the file when it is not a JSON array of records. */
  parse(): ExportRecord[];
}

/** One side, loaded: what the comparison needs of a snapshot or a built collection. */
export interface LoadedExport {
  readonly available: boolean;
  readonly reason?: string;
  /** Empty when unavailable, and when `file` holds them, not parsed yet. */
  readonly records: readonly ExportRecord[];
  /** A snapshot's export file, when available: the comparison parses what it needs of it. */
  readonly file?: ExportFile;
  /** Columns listed as unobtainable in the side's `nullFields`. */
  readonly nullColumns: ReadonlySet<string>;
}

export interface LoadedSide {
  readonly info: DiffSide;
  /** The exports the side lists, by name; an export the side does not list is treated as unavailable. */
  readonly listed: ReadonlySet<string>;
  /** A listed export. A snapshot's export file is read only now, so that a diff holds the files of one export at a time. */
  load(name: string): Promise<LoadedExport>;
}

export interface DiffOptions {
  /** Only these exports (catalog names); default all. */
  readonly exports?: readonly string[];
  /** `--ignore` values; undefined or empty: the default volatile list. `none` drops the defaults. */
  readonly ignore?: readonly string[];
  /** `--include`: the export groups to build from a raw collection, and to compare even where no side holds them. */
  readonly include?: readonly Include[];
}
