/**
 * The restore drill, `verify --replay`: a snapshot's exports built again
 * from its own raw/ (the build a replay runs, no network) and each compared
 * with the published file, byte for byte. Nothing is written: each export's
 * text is hashed as the build yields it, and only an export that differs is
 * parsed, to name its first record that differs by the export's key
 * columns. Compared with the file as it is, not as the manifest says, so a
 * file changed since is named with its record even when its hash check
 * already failed.
 */
import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { build } from '../exports/build.js';
import { exportsFor } from '../exports/catalog.js';
import { EXPORT_BATCH, exportFileName, serializeBatches } from '../exports/serialize.js';
import type { ExportRecord } from '../exports/types.js';
import { INCLUDES, type Include } from '../includes.js';
import { openSnapshot, type ManifestEntry } from '../snapshot/dir.js';
import { hashFile, readInside, withFileInside } from '../util/safe-read.js';
import type { ReplayReport } from './verify-dir.js';

type Differs = NonNullable<ReplayReport['differs']>;

/** The groups of exports the snapshot holds (--include), from its manifest. */
function includesOf(exports: readonly { export: string }[]): Include[] {
  const held = new Set(exports.map((e) => e.export));
  return INCLUDES.filter((g) =>
    exportsFor([g])
      .filter((d) => d.include === g)
      .some((d) => held.has(d.name)),
  );
}

/** The first record that differs between the rebuilt and the published records, by the export's key columns. */
function firstDifference(name: string, file: string, built: readonly ExportRecord[], published: unknown): Differs {
  const key = exportsFor([...INCLUDES]).find((d) => d.name === name)?.key ?? [];
  const keyOf = (r: ExportRecord) => Object.fromEntries(key.map((k) => [k, r[k] ?? null]));
  if (!Array.isArray(published))
    return { export: name, file, key: null, detail: 'the published file is not a JSON array of records' };
  for (let i = 0; i < Math.max(built.length, published.length); i++) {
    const b = built[i];
    const p = published[i] as ExportRecord | undefined;
    if (b === undefined)
      return {
        export: name,
        file,
        key: keyOf(p!),
        detail: `the published file holds record ${i + 1}, which the rebuild does not`,
      };
    if (p === undefined)
      return {
        export: name,
        file,
        key: keyOf(b),
        detail: `the rebuild holds record ${i + 1}, which the published file does not`,
      };
    if (JSON.stringify(b) === JSON.stringify(p)) continue;
    const all = [...new Set([...Object.keys(b), ...Object.keys(p)])];
    const columns = all.filter((c) => JSON.stringify(b[c]) !== JSON.stringify(p[c]));
    const sameKey = key.every((k) => JSON.stringify(b[k]) === JSON.stringify(p[k]));
    return {
      export: name,
      file,
      key: keyOf(b),
      detail: sameKey
        ? `record ${i + 1} differs in ${columns.length > 0 ? columns.join(', ') : 'its columns'}`
        : `record ${i + 1} is another record in the published file (${JSON.stringify(keyOf(p))})`,
    };
  }
  return { export: name, file, key: null, detail: 'the records are the same, but not the bytes (formatting)' };
}

/** Parses the published export file as it is on disk; undefined when it cannot be read or is not JSON. */
async function publishedRecords(dir: string, file: string): Promise<unknown> {
  try {
    return JSON.parse((await readInside(dir, file)).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The sha256 of a published export file as it is on disk, read a buffer at a time; undefined when it cannot be read. */
async function publishedHash(dir: string, file: string): Promise<string | undefined> {
  try {
    return await withFileInside(dir, file, async (handle) => hashFile(handle.fd).sha256);
  } catch {
    return undefined;
  }
}

/** The drill on the snapshot directory `dir` (see the file's opening comment). */
export async function replayDir(dir: string): Promise<ReplayReport> {
  const failed = (error: string): ReplayReport => ({ ok: false, exports: 0, error });
  let snapshot;
  try {
    snapshot = await openSnapshot(dir);
  } catch (err) {
    return failed((err as Error).message);
  }
  const m = snapshot.manifest;
  const raw = path.join(dir, 'raw');
  const hasRaw = (await lstat(path.join(raw, COLLECTION_MANIFEST)).catch(() => undefined))?.isFile() === true;
  if (!hasRaw || m.routes.every((r) => !r.file))
    return failed('made without --raw: it holds no raw/ to build its exports from again');
  let collection;
  try {
    collection = await readCollection(raw, { checkBodies: false });
  } catch (err) {
    return failed(`its raw/ cannot be read: ${(err as Error).message}`);
  }
  const published = new Map<string, ManifestEntry>(m.exports.map((e) => [e.export, e]));
  let count = 0;
  const built = build(collection, undefined, includesOf(m.exports));
  for (let step = built.next(); !step.done; step = built.next()) {
    const e = step.value;
    count++;
    const file = exportFileName(e.export, e.count, collection.manifest.date);
    const kept: ExportRecord[] = [];
    const hash = createHash('sha256');
    const batches = (function* () {
      for (const b of e.batches(EXPORT_BATCH)) {
        kept.push(...b);
        yield b;
      }
    })();
    for (const text of serializeBatches(batches)) hash.update(text);
    const entry = published.get(e.export);
    if (entry === undefined)
      return {
        ok: false,
        exports: count,
        differs: { export: e.export, file, key: null, detail: 'not in the published snapshot' },
      };
    if (entry.file !== file)
      return {
        ok: false,
        exports: count,
        differs: { export: e.export, file: entry.file, key: null, detail: `the rebuild names its file ${file}` },
      };
    if ((await publishedHash(dir, file)) === hash.digest('hex')) continue;
    return {
      ok: false,
      exports: count,
      differs: firstDifference(e.export, file, kept, await publishedRecords(dir, file)),
    };
  }
  const rebuilt = new Set(exportsFor(includesOf(m.exports)).map((d) => d.name));
  const extra = m.exports.find((e) => !rebuilt.has(e.export));
  if (extra !== undefined)
    return {
      ok: false,
      exports: count,
      differs: { export: extra.export, file: extra.file, key: null, detail: 'the rebuild has no such export' },
    };
  return { ok: true, exports: count };
}
