/**
 * Loading one side of a diff: a snapshot directory (its manifest and the
 * export files it names), or a raw collection, built first exactly as
 * `--replay` would build it.
 */
import { FailedError } from '../errors.js';
import type { ManifestEntry, Snapshot } from '../snapshot/dir.js';
import type { BuiltCollection, OpenedNight } from '../snapshot/open.js';
import type { ExportDef } from '../exports/define.js';
import type { Include } from '../includes.js';
import type { ExportRecord, NullField } from '../exports/types.js';
import type { LoadedExport, LoadedSide } from './types.js';
import { escapeControl } from '../util/escape.js';
import { describeJsonError } from '../util/json-error.js';

function nullColumnsByExport(nullFields: readonly Pick<NullField, 'export' | 'field'>[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const n of nullFields) {
    let set = out.get(n.export);
    if (!set) out.set(n.export, (set = new Set()));
    set.add(n.field);
  }
  return out;
}

/** An export file's records: its bytes parsed whole, or FailedError saying how the file is damaged. */
function parseExportBytes(dir: string, file: string, bytes: Buffer): ExportRecord[] {
  const shown = escapeControl(file);
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FailedError(
      `${shown} in ${escapeControl(dir)} is not valid JSON (${describeJsonError(e, text)}); the snapshot is damaged`,
    );
  }
  if (!Array.isArray(json))
    throw new FailedError(`${shown} in ${escapeControl(dir)} is not a JSON array of records; the snapshot is damaged`);
  const bad = json.findIndex((r: unknown) => r === null || typeof r !== 'object' || Array.isArray(r));
  if (bad >= 0)
    throw new FailedError(`${shown} in ${escapeControl(dir)}: element ${bad} is not a record; the snapshot is damaged`);
  return json as ExportRecord[];
}

const UNLISTED: LoadedExport = {
  available: false,
  reason: 'not listed in the manifest',
  records: [],
  nullColumns: new Set(),
};

/**
 * A snapshot's side: an export file is read (checked against the manifest)
 * only when its export is loaded, and its bytes are valid until the next
 * export is loaded. `use` is given each export's bytes as it is loaded, so
 * that the file's other readers (the report's) need not read it again.
 */
export function snapshotSide(
  snapshot: Snapshot,
  wanted: readonly ExportDef[],
  use?: (entry: ManifestEntry, bytes: Buffer) => void,
): LoadedSide {
  const m = snapshot.manifest;
  const nulls = nullColumnsByExport(m.nullFields);
  const listed = new Set(wanted.filter((def) => snapshot.entry(def.name) !== undefined).map((def) => def.name));
  return {
    info: { dir: snapshot.dir, kind: 'snapshot', baseUrl: m.baseUrl, time: m.time, date: m.date },
    listed,
    load: async (name) => {
      const entry = listed.has(name) ? snapshot.entry(name) : undefined;
      if (!entry) return UNLISTED;
      const nullColumns = nulls.get(name) ?? new Set<string>();
      const reason = entry.reason !== undefined ? { reason: entry.reason } : {};
      if (!entry.available) return { available: false, ...reason, records: [], nullColumns };
      const bytes = await snapshot.bytes(entry);
      use?.(entry, bytes);
      const file = { bytes, count: entry.count, parse: () => parseExportBytes(snapshot.dir, entry.file, bytes) };
      return { available: true, ...reason, records: [], file, nullColumns };
    },
  };
}

function collectionSide(dir: string, { collection, built: result }: BuiltCollection): LoadedSide {
  const nulls = nullColumnsByExport(result.nullFields);
  const exports = new Map<string, LoadedExport>(
    result.exports.map((e) => [e.export, { ...e, nullColumns: nulls.get(e.export) ?? new Set<string>() }]),
  );
  const m = collection.manifest;
  return {
    info: { dir, kind: 'collection', baseUrl: m.baseUrl, time: m.time, date: m.date },
    listed: new Set(exports.keys()),
    load: async (name) => exports.get(name) ?? UNLISTED,
  };
}

/**
 * One side, a snapshot (its `raw/` not looked at: its exports are what it
 * published) or a raw collection, built first. Only the export files of
 * `wanted` are read; `use` is given a snapshot's, as snapshotSide does.
 */
export async function loadSide(
  night: OpenedNight,
  wanted: readonly ExportDef[],
  include: readonly Include[] = [],
  use?: (entry: ManifestEntry, bytes: Buffer) => void,
): Promise<LoadedSide> {
  return night.snapshot
    ? snapshotSide(night.snapshot, wanted, use)
    : collectionSide(night.dir, await night.build(include));
}
