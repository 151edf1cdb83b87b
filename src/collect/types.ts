import type { Body } from '../body/file.js';
import type { CollectionManifest } from '../manifests.js';

/**
 * A raw collection in memory: the manifest plus every body as the exact bytes
 * received, keyed by the manifest's `route` label. Live runs and replay both
 * produce this, and the build reads nothing else. A large body read back
 * from disk stays there (a BodyFile) until the build reads it.
 */
export interface RawCollection {
  manifest: CollectionManifest;
  bodies: Map<string, Body>;
}
