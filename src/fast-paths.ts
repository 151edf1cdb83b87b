/**
 * Every fast path, by name. A fast path is a hand-written stand-in for a
 * plain path that must give the same result; its file opens with FAST PATH,
 * what it stands in for, its switch and its differential test. The switches
 * are a parameter of the code that has the choice (the build, the body
 * check, the record reader, the diff), FAST_PATHS by default: every command
 * runs with all of them on. A switch off takes the plain path; the
 * differential tests pass each one off and on and require the same result,
 * and test/unit/fence.test.ts requires that they do, for every switch here.
 * What each earns: docs/architecture.md.
 */
export interface FastPaths {
  /** exports/fast/record-check.ts: a compiled yes/no check instead of zod's safeParse for every record. */
  readonly recordCheck: boolean;
  /** body/json-scan.ts: a byte scan instead of JSON.parse to vouch for a body the collector keeps as bytes. */
  readonly jsonScan: boolean;
  /** exports/fast/record-maker.ts: records built by a generated object literal instead of assigned keys. */
  readonly recordMaker: boolean;
  /** exports/fast/key-order.ts: sorting by one joined string key instead of sortRecords' column comparison. */
  readonly keyOrder: boolean;
  /** diff/walk-newer.ts: the newer of two export files read only where it differs from the older, instead of split and keyed whole. */
  readonly walkNewer: boolean;
}

/** Every fast path on: what the commands run. */
export const FAST_PATHS: FastPaths = Object.freeze({
  recordCheck: true,
  jsonScan: true,
  recordMaker: true,
  keyOrder: true,
  walkNewer: true,
});
