import { stat, type FileHandle } from 'node:fs/promises';
import { planRoute, planRoutes, REALMS_ROUTE, type RouteDef } from '../api/catalog.js';
import { BodyError, checkBody, countSlices } from '../body/decode.js';
import { escapeControl } from '../util/escape.js';
import { describeJsonError } from '../util/json-error.js';
import {
  hashFile,
  isPlainFileName,
  readInside,
  sha256Hex,
  UnreadableEntryError,
  withFileInside,
} from '../util/safe-read.js';
import { opensArray } from '../body/slices.js';
import { bufferReader } from '../body/reader.js';
import { BodyFile, LARGE_BODY_BYTES, openBody, type Body } from '../body/file.js';
import { FailedError, UsageError } from '../errors.js';
import type { RouteRecord } from '../api/route-record.js';
import { CollectionManifestSchema, type CollectionManifest } from '../manifests.js';
import type { RawCollection } from './types.js';
import { COLLECTION_MANIFEST } from './write.js';

/**
 * Marks failed, as a live run records it (error, no file), every route whose
 * body the manifest lists as read but that is not JSON of its route's shape.
 * Returns the routes marked.
 */
export function markBodyFailures(
  collection: RawCollection,
  failures: ReadonlyArray<{ route: string; detail: string }>,
): RouteRecord[] {
  const marked: RouteRecord[] = [];
  for (const f of failures) {
    const r = collection.manifest.routes.find((x) => x.route === f.route);
    if (!r || r.error !== undefined) continue;
    markFailed(r, f.detail);
    collection.bodies.delete(f.route);
    marked.push(r);
  }
  return marked;
}

/** Records route `r` as failed with `error`, as a live run records a failed route: no file, size or hash. */
export function markFailed(r: RouteRecord, error: string): void {
  r.error = error;
  r.file = null;
  delete r.sha256;
  delete r.bytes;
}

export interface ReadCollectionOptions {
  /**
   * Check every body now with the check a live run applies (default true),
   * so that a body a live run would have refused fails its route here too,
   * even when its sha256 matches. A caller that builds at once may pass
   * false and apply the build's `bodyFailures` (markBodyFailures) instead:
   * the build parses every body anyway.
   */
  readonly checkBodies?: boolean;
  /** Array bodies of at least this many bytes stay on disk until the build reads them (default LARGE_BODY_BYTES; tests pass less). */
  readonly largeBodyBytes?: number;
}

/**
 * Reads a raw collection (a `collect` directory or a snapshot's `raw/`),
 * checking every file against the manifest's sha256 and, unless told
 * otherwise, every body's shape. Reads only regular files inside `dir`
 * (readInside). Opens no socket.
 */
export async function readCollection(dir: string, options: ReadCollectionOptions = {}): Promise<RawCollection> {
  const manifest = await readManifest(dir);
  const defs = routeDefsByLabel(manifest);
  const largeBodyBytes = options.largeBodyBytes ?? LARGE_BODY_BYTES;
  const bodies = new Map<string, Body>();
  await Promise.all(
    manifest.routes.map((r) =>
      readRouteBody(dir, r, options.checkBodies === false ? undefined : defs.get(r.route), largeBodyBytes, bodies),
    ),
  );
  return { manifest, bodies };
}

const NEEDS_COLLECTION = "--replay needs a raw collection directory (from svc-snapshot collect, or a snapshot's raw/)";

/** The collection manifest of `dir`, parsed against its schema; a UsageError where there is none to read. */
async function readManifest(dir: string): Promise<CollectionManifest> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UsageError(`${escapeControl(dir)} is not a directory; ${NEEDS_COLLECTION}`);
  }
  let text: string;
  try {
    text = (await readInside(dir, COLLECTION_MANIFEST)).toString('utf8');
  } catch (err) {
    const why = err instanceof UnreadableEntryError ? err.problem : 'cannot be read';
    throw new UsageError(`${COLLECTION_MANIFEST} in ${escapeControl(dir)} ${why}; ${NEEDS_COLLECTION}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `${COLLECTION_MANIFEST} in ${escapeControl(dir)} is not valid JSON (${describeJsonError(e, text)}); the collection is damaged`,
    );
  }
  const parsed = CollectionManifestSchema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new UsageError(
      `${COLLECTION_MANIFEST} in ${escapeControl(dir)} is not a collection manifest ` +
        `(${escapeControl(i?.path.join('.') || 'top level')}: ${i?.message ?? 'invalid'})`,
    );
  }
  return parsed.data;
}

/** Route r's body into `bodies`, checked by its sha256 and (given `def`) its shape; a body of another shape fails r. */
async function readRouteBody(
  dir: string,
  r: RouteRecord,
  def: RouteDef | undefined,
  largeBodyBytes: number,
  bodies: Map<string, Body>,
): Promise<void> {
  if (r.file === null) return;
  if (!isPlainFileName(r.file) || r.sha256 === undefined) {
    throw new UsageError(
      `${COLLECTION_MANIFEST} in ${escapeControl(dir)} names file "${escapeControl(r.file)}" for ` +
        `${escapeControl(r.route)} without a valid name or sha256; the collection is damaged`,
    );
  }
  const file = r.file;
  let read: { body: Body; sha: string };
  try {
    read = await withFileInside(dir, file, (handle, size) =>
      readBody(handle, size, new BodyFile(dir, file, size, r.sha256!), largeBodyBytes),
    );
  } catch (err) {
    const why = err instanceof UnreadableEntryError ? err.problem : 'cannot be read';
    throw new FailedError(
      `${escapeControl(file)} is listed in ${COLLECTION_MANIFEST} but ${why}; refusing to build from ${escapeControl(dir)}`,
    );
  }
  if (read.sha !== r.sha256) {
    throw new FailedError(
      `${escapeControl(file)} in ${escapeControl(dir)} does not match the sha256 in ${COLLECTION_MANIFEST}: it ` +
        `was changed after collection; refusing to build from it`,
    );
  }
  const body = read.body;
  if (def) {
    try {
      if (Buffer.isBuffer(body)) checkBody(r.route, def, body, { quote: false });
      else checkFile(r.route, def, body);
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      // As a live run records it: the route failed, its body is not used.
      markFailed(r, err.detail);
      return;
    }
  }
  bodies.set(r.route, body);
}

/** The route definition behind each label a collection of these realms can hold. */
function routeDefsByLabel(manifest: CollectionManifest): Map<string, RouteDef> {
  const out = new Map<string, RouteDef>();
  for (const p of [planRoute(REALMS_ROUTE), ...planRoutes(manifest.realms.ids)]) out.set(p.label, p.def);
  return out;
}

/**
 * A body file's bytes and sha256. A large array body is only hashed, a few
 * MB at a time, and left on disk (the BodyFile) for the build to read a
 * slice at a time; anything else is read whole.
 */
async function readBody(
  handle: FileHandle,
  size: number,
  file: BodyFile,
  large: number,
): Promise<{ body: Body; sha: string }> {
  if (size >= large) {
    const head = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (opensArray(bufferReader(head.subarray(0, bytesRead)))) {
      const hashed = hashFile(handle.fd);
      return { body: file, sha: hashed.size === size ? hashed.sha256 : '' };
    }
  }
  const bytes = await handle.readFile();
  return { body: bytes, sha: sha256Hex(bytes) };
}

/** checkBody of a body left on disk: its slices parsed and dropped, its sha256 checked again on the way. */
function checkFile(route: string, def: RouteDef, file: BodyFile): void {
  const reader = openBody(file);
  try {
    countSlices(route, def, reader, { quote: false });
  } finally {
    reader.done();
  }
}
