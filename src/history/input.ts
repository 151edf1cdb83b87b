import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FailedError, UsageError } from '../errors.js';
import { COLLECTION_MANIFEST, toJsonFile } from '../collect/write.js';
import { shown, SNAPSHOT_MANIFEST, type Snapshot } from '../snapshot/dir.js';
import { openNight, type BuiltCollection, type OpenedNight } from '../snapshot/open.js';
import { recordRanges } from '../snapshot/records.js';
import { EXPORT_BATCH, exportFileName, serializeBatches } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { exportTable } from './schema.js';
import type { Include } from '../includes.js';
import { fileProblem, recordTextsOf, sameAsWritten } from './texts.js';
import { snapshotManifest } from '../exports/manifest.js';
import { FINDINGS_FILE } from '../findings/index.js';
import { readInside, UnreadableEntryError } from '../util/safe-read.js';
import { describeJsonError } from '../util/json-error.js';

export interface InputExport {
  readonly export: string;
  readonly file: string;
  readonly count: number;
  readonly available: boolean;
  readonly sha256: string;
  /**
   * The records and their texts, read and checked against the manifest when
   * called (once: the load calls it only for an export it stores). `whole`: check every record's layout (a first load, which
   * stores them all) rather than only those the load names.
   */
  readonly rows: (whole: boolean) => Promise<ExportRows>;
}

interface ExportRows {
  /** texts[i] is record i as the export file holds it (src/history/texts.ts). */
  readonly texts: readonly string[];
  /** Record i, parsed when asked for. */
  record(i: number): ExportRecord;
  /**
   * Throws unless texts[which[j]] is exactly what the export writer makes of
   * records[j] (record which[j], already parsed), for each j; `which` ascending.
   */
  checkTexts(which: readonly number[], records: readonly ExportRecord[]): void;
}

/** A file of the snapshot besides its exports that the history keeps for as-of (KEPT_FILES). */
interface KeptFile {
  readonly name: string;
  readonly sha256: string;
  /** Its text, read and checked against the manifest when called. */
  readonly text: () => Promise<string>;
}

/**
 * The files besides the exports that as-of gives back: `_findings.json`,
 * the findings as the snapshot's own version evaluated them at its time (a
 * later version's rules may differ, so they are kept, not evaluated again).
 * The spreadsheets, the report and raw/ are not kept (docs/history.md).
 */
const KEPT_FILES: readonly string[] = [FINDINGS_FILE];

export interface SnapshotInput {
  readonly dir: string;
  readonly baseUrl: string;
  readonly time: string;
  readonly date: string;
  readonly source: 'live' | 'replay';
  readonly complete: boolean;
  readonly manifestText: string;
  readonly exports: readonly InputExport[];
  /** The files of KEPT_FILES the manifest lists. */
  readonly kept: readonly KeptFile[];
  /**
   * Checks every export file the load did not read against the manifest
   * (size and sha256, read a piece at a time): the load calls it before it
   * commits anything of the snapshot (docs/history.md).
   */
  readonly verify: () => Promise<void>;
  /** With --allowed-signers: the fingerprint of the key whose signature of the manifest was verified. */
  readonly signingKey?: string;
}

const notLaidOut = (dir: string, file: string) =>
  new FailedError(
    `${shown(file)} in ${dir} is not laid out as svc-snapshot writes exports (2-space JSON, one array); ` +
      'it would not come back byte for byte, so the snapshot was not loaded',
  );

/** Why a file that is not framed as the writer frames it was refused: not JSON, not an array of records, not `count` of them, or laid out otherwise. */
function unframed(dir: string, file: string, text: string, count: number): FailedError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return new FailedError(
      `${shown(file)} in ${dir} is not valid JSON (${describeJsonError(e, text)}); the snapshot is damaged and was not loaded`,
    );
  }
  if (!Array.isArray(json) || json.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    return new FailedError(
      `${shown(file)} in ${dir} is not a JSON array of records; the snapshot is damaged and was not loaded`,
    );
  }
  if (json.length !== count) {
    return new FailedError(
      `${shown(file)} in ${dir} holds ${json.length} records but the manifest says ${count}; the snapshot was not loaded`,
    );
  }
  return notLaidOut(dir, file);
}

/**
 * A verified export file's records, each with its text as the file holds it,
 * parsed when asked for: a night parses only the records whose text is new.
 * Before any is stored, the file is checked to come back byte for byte from
 * as-of: its records in the export order and, with `whole` (a first load,
 * which stores them all), every record laid out as the writer writes it; a
 * night checks the layout of its new texts itself (`checkTexts`).
 */
function fileRows(
  dir: string,
  file: string,
  data: Buffer,
  count: number,
  key: readonly string[],
  whole: boolean,
): ExportRows {
  // Bytes that are not UTF-8 would be read as U+FFFD and written back otherwise by as-of.
  if (!isUtf8(data))
    throw new FailedError(`${shown(file)} in ${dir} is not UTF-8 text; the snapshot is damaged and was not loaded`);
  const ranges = recordRanges(data);
  if (ranges?.starts.length !== count) throw unframed(dir, file, data.toString('utf8'), count);
  const { starts, ends } = ranges;
  const texts = Array.from(starts, (start, i) => data.toString('utf8', start, ends[i]));
  const problem = fileProblem(texts, key, whole);
  if (problem?.kind === 'layout') throw notLaidOut(dir, file);
  if (problem?.kind === 'order') {
    throw new FailedError(
      `${shown(file)} in ${dir} is not sorted by its key (record ${problem.record + 1} sorts before the one above it); ` +
        'it is not an export as svc-snapshot writes it, so the snapshot was not loaded',
    );
  }
  const record = (i: number): ExportRecord => {
    try {
      return JSON.parse(texts[i]!) as ExportRecord;
    } catch (e) {
      const why = describeJsonError(e, texts[i]);
      throw new FailedError(
        `record ${i + 1} of ${shown(file)} in ${dir} is not valid JSON (${why}); the snapshot is damaged and was not loaded`,
      );
    }
  };
  return {
    texts,
    record,
    checkTexts(which, records) {
      const given = which.map((i) => texts[i]!);
      if (!sameAsWritten(records, given)) throw notLaidOut(dir, file);
    },
  };
}

/** The loading of an opened snapshot: what the history needs of its manifest, each export file read (and checked) when its export is loaded. */
function snapshotInput(snapshot: Snapshot): SnapshotInput {
  const { dir, manifest: m } = snapshot;
  // as-of ranks runs by time: the manifest's schema holds it to the form the tool writes, nothing looser.
  if (m.baseUrl === '') {
    throw new FailedError(
      `${SNAPSHOT_MANIFEST} in ${dir} is not a snapshot manifest (baseUrl: empty); the snapshot was not loaded`,
    );
  }
  const exports = m.exports.map((e): InputExport => {
    const table = exportTable(e.export);
    if (!table)
      throw new FailedError(
        `${SNAPSHOT_MANIFEST} in ${dir} lists an export "${shown(e.export)}" that this version does not know; the snapshot was not loaded`,
      );
    if (e.sha256 === undefined) {
      throw new FailedError(
        `${SNAPSHOT_MANIFEST} in ${dir} has no sha256 for ${e.export} (written by a version before export hashes); ` +
          'its files cannot be verified, so it was not loaded. ' +
          'Load its raw collection instead (svc-snapshot history load <dir>/raw), or re-create it with --replay',
      );
    }
    const rows = async (whole: boolean) =>
      fileRows(dir, e.file, await snapshot.bytes(e, false), e.count, table.def.key, whole);
    return { export: e.export, file: e.file, count: e.count, available: e.available, sha256: e.sha256, rows };
  });
  return {
    dir,
    baseUrl: m.baseUrl,
    time: m.time,
    date: m.date,
    source: m.source,
    complete: m.complete,
    manifestText: snapshot.manifestBytes!.toString('utf8'),
    exports,
    kept: keptFiles(snapshot),
    verify: () => snapshot.checkRest(),
  };
}

/** The manifest's `files` entries of KEPT_FILES, each read as UTF-8 text (what the history stores) and checked against its size and sha256. */
function keptFiles(snapshot: Snapshot): KeptFile[] {
  const out: KeptFile[] = [];
  for (const f of snapshot.manifest.files ?? []) {
    // Each once: openSnapshot refuses a manifest naming a file twice.
    if (!KEPT_FILES.includes(f.name)) continue;
    out.push({
      name: f.name,
      sha256: f.sha256,
      text: async () => {
        const data = await snapshot.listedFile(f);
        // Kept as text (PostgreSQL's text holds no NUL); svc-snapshot writes it as UTF-8 JSON, which escapes control characters.
        if (!isUtf8(data) || data.includes(0)) {
          const why = 'it was not written so by svc-snapshot, and the snapshot was not loaded';
          throw new FailedError(`${shown(f.name)} in ${snapshot.dir} is not UTF-8 text; ${why}`);
        }
        return data.toString('utf8');
      },
    });
  }
  return out;
}

/**
 * The sha256 of the export file these records make, hashed a batch of EXPORT_BATCH records at a time (serializeBatches writes
 * serializeExport's bytes): a large export's whole text is never built, and it can be longer than V8's longest string.
 */
function exportSha256(records: readonly ExportRecord[]): string {
  const hash = createHash('sha256');
  function* batches() {
    for (let i = 0; i < records.length; i += EXPORT_BATCH) yield records.slice(i, i + EXPORT_BATCH);
  }
  for (const piece of serializeBatches(batches())) hash.update(piece);
  return hash.digest('hex');
}

/** A raw collection is built first, as --replay builds it; its manifest is the one that build would publish. */
function collectionInput(
  dir: string,
  include: readonly Include[],
  { collection, built: result }: BuiltCollection,
): SnapshotInput {
  const complete = collection.manifest.routes.every((r) => r.error === undefined);
  const date = collection.manifest.date;
  const written = result.exports.map((e) => ({
    ...e,
    file: exportFileName(e.export, e.records.length, date),
    count: e.records.length,
    sha256: exportSha256(e.records),
  }));
  // snapshotManifest takes of each export only the manifest's fields.
  const manifest = snapshotManifest(collection, { ...result, exports: written }, 'replay', false, complete, include);
  return {
    dir,
    baseUrl: manifest.baseUrl,
    time: manifest.time,
    date,
    source: 'replay',
    complete,
    manifestText: toJsonFile(manifest),
    kept: [],
    // The texts are the writer's own: nothing to check.
    verify: async () => {},
    exports: written.map(({ reason: _r, proposedRoute: _p, records, ...w }) => ({
      ...w,
      rows: async () => ({ texts: recordTextsOf(records), record: (i) => records[i]!, checkTexts() {} }),
    })),
  };
}

/** A directory to load, opened: a snapshot (its manifest read), or a raw collection (built when read); its base URL and time order the load. */
export type InputHead = OpenedNight & { readonly baseUrl: string; readonly time: string };

const HINT = 'give snapshot directories or raw collections';

/** Opens a snapshot directory or a raw collection's manifest: enough to order a load and check its site. */
export async function openInput(dir: string): Promise<InputHead> {
  const night = await openNight(dir, HINT);
  if (night.snapshot) return { ...night, baseUrl: night.snapshot.manifest.baseUrl, time: night.snapshot.manifest.time };
  let text: string;
  try {
    text = (await readInside(dir, COLLECTION_MANIFEST)).toString('utf8');
  } catch (err) {
    if (err instanceof UnreadableEntryError) throw new UsageError(`${err.message}; ${HINT}`, { cause: err });
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `${COLLECTION_MANIFEST} in ${dir} cannot be read as JSON (${describeJsonError(e, text)}); ${HINT}`,
    );
  }
  const head = z.object({ baseUrl: z.string().min(1), time: z.string().min(1) }).safeParse(json);
  if (!head.success) throw new UsageError(`${COLLECTION_MANIFEST} in ${dir} has no baseUrl and time; ${HINT}`);
  return { ...night, baseUrl: head.data.baseUrl, time: head.data.time };
}

/** What a load reads of an opened directory: a snapshot's exports as it holds them, or a raw collection built first, with the --include groups. */
export async function readInput(head: InputHead, include: readonly Include[] = []): Promise<SnapshotInput> {
  return head.snapshot ? snapshotInput(head.snapshot) : collectionInput(head.dir, include, await head.build(include));
}
