import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { TOKEN_TYPES } from '../api/catalog.js';
import { FailedError, UsageError } from '../cli/errors.js';
import type { CollectionManifest, RawCollection } from './types.js';
import { COLLECTION_MANIFEST } from './write.js';

/** One route's entry, as the collection manifest and the snapshot manifest both list it. */
export const RouteRecordSchema = z.object({
  route: z.string().regex(/^GET \/api\//),
  tokenType: z.enum(TOKEN_TYPES),
  status: z.number().int().nullable(),
  file: z.string().nullable(),
  bytes: z.number().int().nonnegative().optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  attempts: z.number().int().optional(),
  durationMs: z.number().optional(),
  skipped: z.literal(true).optional(),
  reason: z.string().optional(),
  error: z.string().optional(),
});

const ManifestSchema = z.object({
  kind: z.literal('collection'),
  tool: z.object({ name: z.string(), version: z.string() }),
  baseUrl: z.string(),
  time: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  authMode: z.enum(['token', 'per-type']),
  realms: z.object({ source: z.string(), ids: z.array(z.string()) }),
  routes: z.array(RouteRecordSchema),
});

/** A file name from a manifest must name a file inside the collection, nothing else. */
function safeFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * Reads a raw collection (a `collect` directory or a snapshot's `raw/`),
 * checking every file against the manifest's sha256. Opens no socket.
 */
export async function readCollection(dir: string): Promise<RawCollection> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UsageError(`${dir} is not a directory; --replay needs a raw collection directory (from svc-snapshot collect, or a snapshot's raw/)`);
  }
  let text: string;
  try {
    text = await readFile(join(dir, COLLECTION_MANIFEST), 'utf8');
  } catch {
    throw new UsageError(`${dir} has no readable ${COLLECTION_MANIFEST}; --replay needs a raw collection directory (from svc-snapshot collect, or a snapshot's raw/)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${join(dir, COLLECTION_MANIFEST)} is not valid JSON (${(e as Error).message}); the collection is damaged`);
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new UsageError(`${join(dir, COLLECTION_MANIFEST)} is not a collection manifest (${i?.path.join('.') || 'top level'}: ${i?.message ?? 'invalid'})`);
  }
  const manifest = parsed.data as CollectionManifest;
  const bodies = new Map<string, Buffer>();
  await Promise.all(
    manifest.routes.map(async (r) => {
      if (r.file === null) return;
      if (!safeFileName(r.file) || r.sha256 === undefined) {
        throw new UsageError(`${COLLECTION_MANIFEST} in ${dir} names file "${r.file}" for ${r.route} without a valid name or sha256; the collection is damaged`);
      }
      let body: Buffer;
      try {
        body = await readFile(join(dir, r.file));
      } catch {
        throw new FailedError(`${r.file} is listed in ${COLLECTION_MANIFEST} but cannot be read from ${dir}; the collection is incomplete`);
      }
      const sha = createHash('sha256').update(body).digest('hex');
      if (sha !== r.sha256) {
        throw new FailedError(`${r.file} in ${dir} does not match the sha256 in ${COLLECTION_MANIFEST}: it was changed after collection; refusing to build from it`);
      }
      bodies.set(r.route, body);
    }),
  );
  return { manifest, bodies };
}
