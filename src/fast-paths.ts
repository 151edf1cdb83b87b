/**
 * Every fast path's switch, by name: FAST_PATHS (all on) is what the commands run; a switch off takes the plain path
 * (docs/architecture.md, "Fast paths"; test/unit/fence.test.ts holds each to its differential test).
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
  /** archive/native-stream.ts: an archive's payload decrypted by Node's ChaCha20-Poly1305 instead of age-encryption's. */
  readonly nativeStream: boolean;
}

/** Every fast path on: what the commands run. */
export const FAST_PATHS: FastPaths = Object.freeze({
  recordCheck: true,
  jsonScan: true,
  recordMaker: true,
  keyOrder: true,
  walkNewer: true,
  nativeStream: true,
});
