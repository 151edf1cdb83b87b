import { redact } from '../util/redact.js';
import type { Staging } from '../publish/index.js';
import { MANIFEST_OF, type CollectionManifest } from '../manifests.js';
import type { RawCollection } from './types.js';
import type { Body } from '../body/file.js';

export const COLLECTION_MANIFEST = MANIFEST_OF.collection;

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

/** Writes every body byte for byte, and the manifest (through `manifestTo`: a snapshot lists raw/'s), under `prefix` of the staging dir. */
export async function writeCollection(
  staging: Staging,
  collection: RawCollection,
  prefix = '',
  manifestTo: Pick<Staging, 'writeFile'> = staging,
): Promise<void> {
  for (const r of collection.manifest.routes) {
    if (r.file === null) continue;
    const body = collection.bodies.get(r.route);
    if (!body) throw new Error(`internal: no body for ${r.route}`);
    if (Buffer.isBuffer(body)) await staging.writeFile(prefix + r.file, body);
    else await staging.writeChunks(prefix + r.file, body.chunks());
  }
  await writeCollectionManifest(manifestTo, collection.manifest, prefix);
}

export async function writeCollectionManifest(
  staging: Pick<Staging, 'writeFile'>,
  manifest: CollectionManifest,
  prefix = '',
): Promise<void> {
  await staging.writeFile(prefix + COLLECTION_MANIFEST, toManifestFile(manifest));
}

/**
 * Bodies written into the staging directory as their routes come in (the
 * collector's onRoute), while later routes download: `take` starts a body's
 * write and says the body is taken; `settled` waits for every write and
 * throws the first failure. The first failure also aborts the routes still
 * downloading (`onFailure`): the run cannot be published anyway.
 */
export class BodyWrites {
  private readonly writes: Array<Promise<void>> = [];

  constructor(
    private readonly staging: Staging,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  take(file: string | null, body: Body | undefined): boolean {
    if (file === null || body === undefined) return false;
    // A large body is copied from the spool a few MB at a time.
    const write = Buffer.isBuffer(body)
      ? this.staging.writeFile(file, body)
      : this.staging.writeChunks(file, body.chunks());
    write.catch(this.onFailure);
    this.writes.push(write);
    return true;
  }

  async settled(): Promise<void> {
    await Promise.allSettled(this.writes);
    for (const write of this.writes) await write;
  }
}
