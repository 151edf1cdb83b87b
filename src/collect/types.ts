import type { TokenType } from '../api/catalog.js';

export type AuthMode = 'token' | 'per-type';

/** One route's entry in `_collection-manifest.json` (CONTRACT section 4). */
export interface RouteRecord {
  route: string;
  tokenType: TokenType;
  status: number | null;
  file: string | null;
  bytes?: number;
  sha256?: string;
  attempts?: number;
  durationMs?: number;
  skipped?: true;
  reason?: string;
  error?: string;
}

export interface RealmsRecord {
  /** `GET /api/realms`, or `--realms` when that route is not served / not callable. */
  source: string;
  ids: string[];
}

export interface CollectionManifest {
  kind: 'collection';
  tool: { name: string; version: string };
  baseUrl: string;
  time: string;
  date: string;
  authMode: AuthMode;
  realms: RealmsRecord;
  routes: RouteRecord[];
}

/**
 * A raw collection in memory: the manifest plus every body as the exact bytes
 * received, keyed by the manifest's `route` label. Live runs and replay both
 * produce this, and the build reads nothing else.
 */
export interface RawCollection {
  manifest: CollectionManifest;
  bodies: Map<string, Buffer>;
}
