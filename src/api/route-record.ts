/**
 * The shapes every layer shares about one collection: a route's record, the
 * realms it was planned for, and how tokens were given. Both manifests list
 * them; types are inferred from the schemas, so a reader and a writer cannot
 * drift apart.
 */
import { z } from 'zod';
import { TOKEN_TYPES } from './catalog.js';

/** `token`: one SVC_TOKEN for every type; `per-type`: a token per token type. */
export const AuthModeSchema = z.enum(['token', 'per-type']);
export type AuthMode = z.infer<typeof AuthModeSchema>;

/** One route's entry, as the collection manifest and the snapshot manifest both list it. */
export const RouteRecordSchema = z.object({
  route: z.string().regex(/^GET \/api\//),
  tokenType: z.enum(TOKEN_TYPES),
  status: z.number().int().nullable(),
  file: z.string().nullable(),
  bytes: z.number().int().nonnegative().optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  attempts: z.number().int().optional(),
  durationMs: z.number().optional(),
  skipped: z.literal(true).optional(),
  reason: z.string().optional(),
  error: z.string().optional(),
});
export type RouteRecord = z.infer<typeof RouteRecordSchema>;

export const RealmsRecordSchema = z.object({
  /** `GET /api/realms`, or `--realms` when that route is not served / not callable. */
  source: z.string(),
  ids: z.array(z.string()),
});
export type RealmsRecord = z.infer<typeof RealmsRecordSchema>;
