/**
 * KEPT FOR MEMORY, FENCED: spooling a live run's large bodies to disk.
 * Equivalent to building from the bodies in memory: the same export files.
 * Held by test/unit/body-slices.test.ts ('a live run's large bodies spooled
 * into the staging directory': the same build, a token-holding body kept in
 * memory) and test/unit/in-process-snapshot.test.ts (a live run with every
 * array body counted large, spooled and with raw/, writes the recording's
 * exports and publishes no spool). What it earns: a live snapshot's peak
 * memory on a huge body (docs/performance.md, `npm run bench -- --huge`).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { BodyFile } from '../body/file.js';
import { opensArray } from '../body/slices.js';
import { bufferReader } from '../body/reader.js';
import type { RawCollection } from '../collect/types.js';
import { SecretSearch, type SecretMatcher } from '../publish/scan.js';
import type { Staging } from '../publish/staging.js';

/** The staging directory's folder of a live run's large bodies waiting for the build; removed before the manifest is written. */
const BODY_SPOOL = '.bodies';

/**
 * A live run's array bodies of at least `minBytes`, swapped for files that
 * hold the same bytes, so that the build reads each a slice at a time, as a
 * replay reads a collection's large bodies, instead of holding its bytes
 * beside the records made of them. With --raw, the files
 * just written to raw/; otherwise copies written to .bodies/ in the staging
 * directory, which `remove` deletes once the build is done. A body holding a
 * secret is not spooled: the staging directory would refuse it, and the
 * build may still make exports of it that hold none. `bytes`: what left memory.
 */
export async function largeBodiesToDisk(
  staging: Staging,
  collection: RawCollection,
  opts: { readonly raw: boolean; readonly minBytes: number; readonly matcher: SecretMatcher | null },
): Promise<{ bytes: number; remove(): void }> {
  let bytes = 0;
  const dir = path.join(staging.dir, opts.raw ? 'raw' : BODY_SPOOL);
  for (const b of [...largeArrayBodies(collection, opts.minBytes)]) {
    if (!opts.raw) {
      if (opts.matcher && new SecretSearch(opts.matcher).push(b.body)) continue;
      await staging.writeFile(`${BODY_SPOOL}/${b.file}`, b.body);
    }
    collection.bodies.set(b.route, new BodyFile(dir, b.file, b.body.byteLength, b.sha256));
    bytes += b.body.byteLength;
  }
  return { bytes, remove: () => (opts.raw ? undefined : rmSync(dir, { recursive: true, force: true })) };
}

/** The array bodies of at least `minBytes` held in memory that the manifest names a file and a sha256 for, with their route records. */
function* largeArrayBodies(
  collection: RawCollection,
  minBytes: number,
): Generator<{ route: string; file: string; sha256: string; body: Buffer }> {
  for (const r of collection.manifest.routes) {
    const body = collection.bodies.get(r.route);
    if (!Buffer.isBuffer(body) || body.byteLength < minBytes || !r.file || !r.sha256 || !opensArray(bufferReader(body)))
      continue;
    yield { route: r.route, file: r.file, sha256: r.sha256, body };
  }
}
