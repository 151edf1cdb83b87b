/**
 * Every fast path, by name, each on: the build's (src/exports/fast/) and the
 * body's (src/body/json-scan.ts). A fast path is a
 * hand-written stand-in for a plain one (named in its file's header) that
 * must give the same result; turning it off here takes the plain one. The
 * differential tests build with all of them off and on and require the same
 * bytes (test/unit/fast-paths.test.ts); an A/B measurement turns one off to
 * see what it still earns. Nothing but those tests changes these values.
 */
export const FAST_PATHS = {
  /** exports/fast/record-check.ts: a compiled yes/no check instead of zod's safeParse for every record. */
  recordCheck: true,
  /** body/json-scan.ts: a byte scan instead of JSON.parse to vouch for a body the collector keeps as bytes. */
  jsonScan: true,
  /** exports/fast/record-maker.ts: records built by a generated object literal instead of assigned keys. */
  recordMaker: true,
  /** exports/fast/key-order.ts: sorting by one joined string key instead of sortRecords' column comparison. */
  keyOrder: true,
};
