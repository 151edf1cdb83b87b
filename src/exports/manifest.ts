import { z } from 'zod';
import { RouteRecordSchema } from '../collect/replay.js';

/** Lower-case hex SHA-256, as the collection manifest writes it too. */
export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * One `exports[]` entry of `_snapshot-manifest.json` (CONTRACT section 5).
 * `sha256` is of the file's bytes as written, so a reader (the history
 * database, an auditor) can verify a file without trusting its name.
 */
export const ManifestExportSchema = z.object({
  export: z.string(),
  file: z.string(),
  count: z.number().int().nonnegative(),
  available: z.boolean(),
  reason: z.string().optional(),
  proposedRoute: z.string().optional(),
  sha256: Sha256,
});
export type ManifestExport = z.infer<typeof ManifestExportSchema>;

/** `_snapshot-manifest.json` as the snapshot command writes it; its TypeScript type is inferred from here. */
export const SnapshotManifestSchema = z.object({
  kind: z.literal('snapshot'),
  source: z.enum(['live', 'replay']),
  tool: z.object({ name: z.string(), version: z.string() }),
  baseUrl: z.string(),
  time: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  authMode: z.enum(['token', 'per-type']),
  realms: z.object({ source: z.string(), ids: z.array(z.string()) }),
  exports: z.array(ManifestExportSchema),
  nullFields: z.array(z.object({ export: z.string(), field: z.string(), reason: z.string(), proposedRoute: z.string().optional() })),
  routes: z.array(RouteRecordSchema),
  validation: z.object({
    issues: z.number().int().nonnegative(),
    samples: z.array(z.object({ route: z.string(), index: z.number().int(), path: z.string(), message: z.string() })),
  }),
  drift: z.array(z.object({ route: z.string(), unknownFields: z.array(z.string()) })),
  complete: z.boolean(),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

/**
 * An `exports[]` entry as readers accept it: `sha256` is absent in manifests
 * written before export hashes were recorded, and is then not checked.
 */
export const ReadableManifestExportSchema = ManifestExportSchema.extend({ sha256: Sha256.optional() });
