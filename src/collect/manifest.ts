import { z } from 'zod';
import { AuthModeSchema, RealmsRecordSchema, RouteRecordSchema } from '../api/route-record.js';

/**
 * `_collection-manifest.json` (CONTRACT section 4), as `collect` writes it
 * and `--replay` reads it back; its TypeScript type is inferred from here.
 */
export const CollectionManifestSchema = z.object({
  kind: z.literal('collection'),
  tool: z.object({ name: z.string(), version: z.string() }),
  baseUrl: z.string(),
  time: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  authMode: AuthModeSchema,
  realms: RealmsRecordSchema,
  routes: z.array(RouteRecordSchema),
});
export type CollectionManifest = z.infer<typeof CollectionManifestSchema>;
