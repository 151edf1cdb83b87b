/**
 * What the build may release and when, as one object the command passes in:
 * whether each body may be deleted from the collection once read, and when a
 * garbage collection is worth its time. The build, the spreadsheet writer and
 * the snapshot command only call it back.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MemoryPolicy {
  /**
   * Delete each body from the collection as soon as the build has read it:
   * memory then holds about one route at a time rather than the whole
   * collection as bytes, parsed values and records. Only a policy made with
   * a BodiesFree proof sets it.
   */
  readonly consumeBodies: boolean;
  /** After routes' records were released, with the bytes their bodies had (before the next, larger route is parsed). */
  readonly afterRelease: (bytes: number) => void;
  /** Before the spreadsheets read an export, with the records of the one before (0 before the first; already dropped). */
  readonly beforeSheetRead: (previousRecords: number) => void;
  /**
   * Once the exports are written and nothing references the last one's
   * records, before the findings read export files back: the build's garbage
   * collected then, so that the read-back's peak is not on top of it.
   */
  readonly beforeFindingsRead: () => void;
}

declare const bodiesFree: unique symbol;

/**
 * Proof that nothing after the build reads the collection's bodies: only
 * writeRawFirst (src/snapshot/files.ts) gives one, once raw/ is
 * written or known not to be wanted. A consuming build can therefore not be
 * started before raw/ is written, whatever order a command's lines are in.
 */
export type BodiesFree = { readonly [bodiesFree]: true };

/** Released bodies of at least this many bytes are worth a garbage collection before the next route is parsed. */
const COLLECT_AFTER_BYTES = 8_000_000;

/** Records of an export after which a garbage collection is worth its time before the next is read for the spreadsheets. */
const SHEET_GC_AFTER_RECORDS = 20_000;

/** Takes nothing away from the caller and never collects: diff, history and tests build from a collection they keep. */
export const KEEP_EVERYTHING: MemoryPolicy = {
  consumeBodies: false,
  afterRelease: () => {},
  beforeSheetRead: () => {},
  beforeFindingsRead: () => {},
};

/**
 * The snapshot command's: bodies consumed as the build reads them, garbage
 * collected after large releases (not after the last export: nothing is
 * parsed after it, and its records are still referenced then), before the
 * spreadsheets read the first export (the build's garbage) and after each
 * large one, and before the findings read theirs, so that the peak stays the
 * build's: the peak may not rise, and without the collections after each
 * large export it does (docs/performance.md, "What the speed and memory
 * code earns").
 */
export function leanSnapshotMemory(_proof: BodiesFree): MemoryPolicy {
  return {
    consumeBodies: true,
    afterRelease: (bytes) => {
      if (bytes >= COLLECT_AFTER_BYTES) collectGarbage();
    },
    beforeSheetRead: (previous) => {
      if (previous === 0 || previous >= SHEET_GC_AFTER_RECORDS) collectGarbage();
    },
    beforeFindingsRead: collectGarbage,
  };
}

/** `convert`'s: no build, so only each large export's garbage is collected before the next is read. */
export const CONVERT_MEMORY: MemoryPolicy = {
  ...KEEP_EVERYTHING,
  beforeSheetRead: (previous) => {
    if (previous >= SHEET_GC_AFTER_RECORDS) collectGarbage();
  },
};

let gcFunction: (() => void) | null | undefined;

/**
 * V8's own `gc()`, without starting node with --expose-gc: the flag, set now,
 * exposes it to contexts created afterwards. Null where that is refused.
 */
function collectGarbage(): void {
  if (gcFunction === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const fn: unknown = runInNewContext('gc');
      gcFunction = typeof fn === 'function' ? (fn as () => void) : null;
    } catch {
      gcFunction = null;
    }
  }
  gcFunction?.();
}
