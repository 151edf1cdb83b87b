import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG, EXPORTS } from '../../src/exports/catalog.js';
import { exportFileName, serializeExport } from '../../src/exports/serialize.js';
import { snapshotManifest } from '../../src/exports/manifest.js';
import type { BuildResult } from '../../src/exports/types.js';
import type { RawCollection } from '../../src/collect/types.js';
import type { Include } from '../../src/includes.js';
import { sha256Hex } from '../../src/util/safe-read.js';

// Snapshot directories written as the snapshot command writes them, for the
// diff's unit and end-to-end tests.

export type Rec = Record<string, unknown>;

/** A record of `exportName` with every catalog column in order: null unless given. */
export function rec(exportName: string, values: Rec): Rec {
  const def = CATALOG.find((e) => e.name === exportName);
  if (!def) throw new Error(`no export ${exportName}`);
  for (const k of Object.keys(values))
    if (!def.columns.some((c) => c.name === k)) throw new Error(`export ${exportName} has no column ${k}`);
  const out: Rec = {};
  for (const c of def.columns) out[c.name] = Object.hasOwn(values, c.name) ? values[c.name] : null;
  return out;
}

export interface SnapSpec {
  date?: string;
  time?: string;
  baseUrl?: string;
  /** Records per export; an export not given is available and empty. */
  records?: Record<string, Rec[]>;
  /** Export → reason it is unavailable. */
  unavailable?: Record<string, string>;
  /** [export, column] pairs listed in nullFields. */
  nullFields?: Array<[string, string]>;
}

/** Writes a snapshot directory as the snapshot command would: every export file and `_snapshot-manifest.json`. */
export function writeSnapshot(dir: string, spec: SnapSpec = {}): string {
  const date = spec.date ?? '2026-11-21';
  mkdirSync(dir, { recursive: true });
  const exports = EXPORTS.map((def) => {
    const reason = spec.unavailable?.[def.name];
    const records = reason !== undefined ? [] : (spec.records?.[def.name] ?? []);
    const file = exportFileName(def.name, records.length, date);
    const content = `${JSON.stringify(records, null, 2)}\n`;
    writeFileSync(join(dir, file), content);
    const sha256 = createHash('sha256').update(content).digest('hex');
    return {
      export: def.name,
      file,
      count: records.length,
      available: reason === undefined,
      ...(reason !== undefined ? { reason } : {}),
      sha256,
    };
  });
  const manifest = {
    kind: 'snapshot',
    source: 'live',
    tool: { name: 'svc-snapshot', version: '1.0.0' },
    baseUrl: spec.baseUrl ?? 'https://platform.example.org',
    time: spec.time ?? `${date}T02:00:00.000Z`,
    date,
    authMode: 'token',
    realms: { source: 'GET /api/realms', ids: ['libvirt'] },
    exports,
    nullFields: (spec.nullFields ?? []).map(([e, f]) => ({ export: e, field: f, reason: 'test: unobtainable' })),
    routes: [],
    validation: { issues: 0, samples: [] },
    drift: [],
    complete: true,
  };
  writeFileSync(join(dir, '_snapshot-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

/**
 * Replaces an export file of a snapshot directory and its sha256 in the
 * manifest, as if the snapshot had been written so: for tests of what a
 * reader says of a damaged file that the manifest vouches for.
 */
export function rewriteExport(dir: string, file: string, content: string): void {
  writeFileSync(join(dir, file), content);
  const path = join(dir, '_snapshot-manifest.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as { exports: Array<{ file: string; sha256?: string }> };
  for (const e of manifest.exports) if (e.file === file) e.sha256 = createHash('sha256').update(content).digest('hex');
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The manifest and the export files of one build, every export's text at once: what writeExports (src/snapshot/files.ts) streams. */
export function snapshotFiles(
  collection: RawCollection,
  result: BuildResult,
  source: 'live' | 'replay',
  withRaw: boolean,
  complete: boolean,
  include: readonly Include[] = [],
) {
  const m = collection.manifest;
  const files = result.exports.map((e) => ({
    name: exportFileName(e.export, e.records.length, m.date),
    content: serializeExport(e),
  }));
  const exports = result.exports.map((e, i) => ({
    ...e,
    file: files[i]!.name,
    count: e.records.length,
    sha256: sha256Hex(files[i]!.content),
  }));
  return { files, manifest: snapshotManifest(collection, { ...result, exports }, source, withRaw, complete, include) };
}
