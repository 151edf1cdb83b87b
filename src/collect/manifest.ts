import { z } from 'zod';
import { AuthModeSchema, RealmsRecordSchema, RouteRecordSchema } from '../api/route-record.js';

function isSiteUrl(value: string): boolean {
  // The URL parser drops tabs and newlines silently: a value holding one is refused, not cleaned.
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * `_collection-manifest.json`, as `collect` writes it
 * and `--replay` reads it back; its TypeScript type is inferred from here.
 */
export const CollectionManifestSchema = z.object({
  kind: z.literal('collection'),
  tool: z.object({ name: z.string(), version: z.string() }),
  /** The site: an http(s) URL with nothing a terminal or a log would act on (it is printed, and names metrics). */
  baseUrl: z.string().refine(isSiteUrl, { error: 'not an http(s) URL' }),
  /** As the collector writes it (Date.toISOString): UTC, `Z`; a real date and time. */
  time: z.iso.datetime({ error: 'not an ISO 8601 UTC time (YYYY-MM-DDTHH:MM:SS.sssZ)' }),
  /** A real calendar date: it names files and directories. */
  date: z.iso.date({ error: 'not a calendar date (YYYY-MM-DD)' }),
  authMode: AuthModeSchema,
  realms: RealmsRecordSchema,
  routes: z.array(RouteRecordSchema),
});
export type CollectionManifest = z.infer<typeof CollectionManifestSchema>;
