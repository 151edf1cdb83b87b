import { createHash, type Hash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { format } from 'date-fns/format';
import { isMatch } from 'date-fns/isMatch';
import { parse } from 'date-fns/parse';
import type { RawCollection } from '../collect/types.js';
import type { Staging } from '../publish/staging.js';
import { buildEach } from './build.js';
import { EXPORTS } from './catalog.js';
import type { ReaderOptions } from './load.js';
import type { BuildResult, ExportRecord, ExportResult } from './types.js';

/** An export file's content: a JSON array, 2-space indented, with a trailing newline (`[]` when empty). */
export function serializeExport(result: Pick<ExportResult, 'records'>): string {
  return `${JSON.stringify(result.records, null, 2)}\n`;
}

/**
 * `<count>-<export> (<M>-<D>-<YYYY>).json` (CONTRACT section 5) for a
 * `YYYY-MM-DD` date. The date is parsed and formatted in the same (local)
 * calendar, so the name does not depend on the process time zone.
 */
export function exportFileName(name: string, count: number, date: string): string {
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`export ${name}: count must be a non-negative integer, got ${count}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !isMatch(date, 'yyyy-MM-dd')) throw new Error(`export ${name}: date must be YYYY-MM-DD, got "${date}"`);
  const day = parse(date, 'yyyy-MM-dd', new Date(2000, 0, 1));
  return `${count}-${name} (${format(day, 'M-d-yyyy')}).json`;
}

/**
 * The export file's content in pieces, from the records in batches: joined,
 * exactly `serializeExport` of all of them (each record is indented the same
 * whether it is stringified in a batch or in the whole array).
 */
export function* serializeBatches(batches: Iterable<readonly ExportRecord[]>): Generator<string> {
  let first = true;
  for (const batch of batches) {
    if (batch.length === 0) continue;
    const json = JSON.stringify(batch, null, 2);
    yield first ? '[\n' : ',\n';
    // Without the batch's own "[\n" and "\n]".
    yield json.slice(2, -2);
    first = false;
  }
  yield first ? '[]\n' : '\n]\n';
}

/**
 * Records per batch: few enough that a batch's text (about 100 KB) is an
 * ordinary young-generation string; a text of several MB goes to V8's
 * large-object space and stays until the next full collection.
 */
export const EXPORT_BATCH = 100;

/** Released bodies of at least this many bytes are worth a garbage collection before the next route is parsed. */
const COLLECT_AFTER_BYTES = 8_000_000;

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

/** An export as the snapshot manifest lists it. */
export interface WrittenExport {
  readonly export: string;
  readonly file: string;
  readonly count: number;
  readonly available: boolean;
  readonly reason?: string;
  readonly proposedRoute?: string;
  /** Of the file's bytes as written. */
  readonly sha256: string;
}

/**
 * The chunks unchanged, each fed to `hash` on its way to the file: the
 * export's digest without reading the file back or holding its text.
 * Strings are hashed as UTF-8, the encoding they are written in.
 */
export function* hashing<T extends string | Uint8Array>(chunks: Iterable<T>, hash: Hash): Generator<T> {
  for (const chunk of chunks) {
    hash.update(chunk);
    yield chunk;
  }
}

/** SHA-256 (hex) of an export file's content. */
export function sha256Hex(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * Builds the 15 exports and writes each into `staging` as it is built, a
 * batch of records at a time (buildEach): the snapshot without ever holding
 * every export, or every export's text, at once. With `consume`, the
 * collection's bodies are released as they are read (write `raw/` first).
 * The files are byte for byte those of `serializeExport(build(…))`.
 */
export async function writeExports(
  staging: Pick<Staging, 'writeChunks'>,
  collection: RawCollection,
  parsed: Map<string, unknown> | undefined,
  opts: Pick<ReaderOptions, 'consume'> = {},
): Promise<Omit<BuildResult, 'exports'> & { exports: WrittenExport[] }> {
  const exports: WrittenExport[] = new Array(EXPORTS.length);
  const result = await buildEach(
    collection,
    parsed,
    async (e, index) => {
      const file = exportFileName(e.export, e.count, collection.manifest.date);
      const hash = createHash('sha256');
      await staging.writeChunks(file, hashing(serializeBatches(e.batches(EXPORT_BATCH)), hash));
      exports[index] = {
        export: e.export,
        file,
        count: e.count,
        available: e.available,
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
        ...(e.proposedRoute !== undefined ? { proposedRoute: e.proposedRoute } : {}),
        sha256: hash.digest('hex'),
      };
    },
    opts.consume ? { consume: true, onRelease: (bytes) => bytes >= COLLECT_AFTER_BYTES && collectGarbage() } : {},
  );
  return { ...result, exports };
}
