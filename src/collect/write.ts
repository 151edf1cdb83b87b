import { redact } from '../util/redact.js';
import type { Staging } from '../publish/index.js';
import type { RawCollection } from './types.js';

export const COLLECTION_MANIFEST = '_collection-manifest.json';
export const SNAPSHOT_MANIFEST = '_snapshot-manifest.json';

export function toJsonFile(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A manifest as written: its strings that came from a server (errors, drift
 * field names, realm ids) may echo a token in some spelling, which is
 * redacted here rather than failing the pre-publish scan.
 */
export function toManifestFile(value: unknown): string {
  return redact(toJsonFile(value));
}

/** Writes every body byte for byte, and the manifest, under `prefix` of the staging dir. */
export async function writeCollection(staging: Staging, collection: RawCollection, prefix = ''): Promise<void> {
  for (const r of collection.manifest.routes) {
    if (r.file === null) continue;
    const body = collection.bodies.get(r.route);
    if (!body) throw new Error(`internal: no body for ${r.route}`);
    if (Buffer.isBuffer(body)) await staging.writeFile(prefix + r.file, body);
    else await staging.writeChunks(prefix + r.file, body.chunks());
  }
  await staging.writeFile(prefix + COLLECTION_MANIFEST, toManifestFile(collection.manifest));
}
