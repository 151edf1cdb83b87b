import type { RawCollection } from '../collect/types.js';
import type { ManifestExport, SnapshotManifest } from '../manifests.js';
import { TOOL } from '../version.js';
import type { Include } from '../includes.js';
import type { BuildResult } from './types.js';

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
