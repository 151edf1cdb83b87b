import { z } from 'zod';
import { RouteRecordSchema } from '../api/route-record.js';
import { CollectionManifestSchema } from '../collect/manifest.js';
import type { RawCollection } from '../collect/types.js';
import { TOOL } from '../version.js';
import { INCLUDES, type Include } from '../includes.js';
import type { BuildResult } from './types.js';

/** Lower-case hex SHA-256, as the collection manifest writes it too. */
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * One `exports[]` entry of `_snapshot-manifest.json` (docs/exports.md).
 * `sha256` is of the file's bytes as written, so a reader (the history
 * database, an auditor) can verify a file without trusting its name.
 */
const ManifestExportSchema = z.object({
  export: z.string(),
  file: z.string(),
  count: z.number().int().nonnegative(),
  available: z.boolean(),
  reason: z.string().optional(),
  proposedRoute: z.string().optional(),
  sha256: Sha256,
});
export type ManifestExport = z.infer<typeof ManifestExportSchema>;

/**
 * One `files[]` entry (docs/verify.md): a file of the snapshot other
 * than its exports (a spreadsheet; `raw/_collection-manifest.json` with
 * --raw), its size and SHA-256, so that `verify` covers it.
 */
const ListedFileSchema = z.object({ name: z.string(), bytes: z.number().int().nonnegative(), sha256: Sha256 });
export type ListedFile = z.infer<typeof ListedFileSchema>;

/** `_snapshot-manifest.json` as the snapshot command writes it; its TypeScript type is inferred from here. */
export const SnapshotManifestSchema = z.object({
  kind: z.literal('snapshot'),
  source: z.enum(['live', 'replay']),
  // What the snapshot says of its collection is what the collection manifest says.
  tool: CollectionManifestSchema.shape.tool,
  baseUrl: CollectionManifestSchema.shape.baseUrl,
  time: CollectionManifestSchema.shape.time,
  date: CollectionManifestSchema.shape.date,
  authMode: CollectionManifestSchema.shape.authMode,
  realms: CollectionManifestSchema.shape.realms,
  /** With --include: the export groups written after the 15 (absent without, so that such a manifest is as before). */
  include: z.array(z.enum(INCLUDES)).optional(),
  exports: z.array(ManifestExportSchema),
  nullFields: z.array(
    z.object({ export: z.string(), field: z.string(), reason: z.string(), proposedRoute: z.string().optional() }),
  ),
  routes: z.array(RouteRecordSchema),
  validation: z.object({
    issues: z.number().int().nonnegative(),
    samples: z.array(z.object({ route: z.string(), index: z.number().int(), path: z.string(), message: z.string() })),
  }),
  drift: z.array(z.object({ route: z.string(), unknownFields: z.array(z.string()) })),
  complete: z.boolean(),
  /** With --format or --raw: the other files the snapshot holds. */
  files: z.array(ListedFileSchema).optional(),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

/**
 * An `exports[]` entry as readers accept it: `sha256` is absent in manifests
 * written before export hashes were recorded, and is then not checked;
 * `bytes`, where a manifest gives a file's size, is checked with it.
 */
export const ReadableManifestExportSchema = ManifestExportSchema.extend({
  sha256: Sha256.optional(),
  bytes: z.number().int().nonnegative().optional(),
});

/** Pure: the manifest of one build, given its exports as written. */
export function snapshotManifest(
  collection: RawCollection,
  result: Omit<BuildResult, 'exports' | 'bodyFailures'> & { exports: readonly ManifestExport[] },
  source: 'live' | 'replay',
  withRaw: boolean,
  complete: boolean,
  include: readonly Include[] = [],
): SnapshotManifest {
  const m = collection.manifest;
  return {
    kind: 'snapshot',
    source,
    tool: TOOL,
    baseUrl: m.baseUrl,
    time: m.time,
    date: m.date,
    authMode: m.authMode,
    realms: m.realms,
    ...(include.length > 0 ? { include: [...include] } : {}),
    exports: result.exports.map((e) => ({
      export: e.export,
      file: e.file,
      count: e.count,
      available: e.available,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      ...(e.proposedRoute !== undefined ? { proposedRoute: e.proposedRoute } : {}),
      sha256: e.sha256,
    })),
    nullFields: result.nullFields,
    routes: m.routes.map((r) => (withRaw ? r : { ...r, file: null })),
    validation: result.validation,
    drift: result.drift,
    complete,
  };
}
