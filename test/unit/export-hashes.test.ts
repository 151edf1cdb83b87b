import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotManifest } from '../../src/exports/manifest.js';
import { SnapshotManifestSchema } from '../../src/manifests.js';
import { snapshotFiles } from '../helpers/snapshot-dir.js';
import { build, buildAll } from '../../src/exports/build.js';
import { EXPORT_BATCH, serializeExport } from '../../src/exports/serialize.js';
import { writeExports } from '../../src/snapshot/files.js';
import { createStaging } from '../../src/publish/index.js';
import { readCollection } from '../../src/collect/replay.js';
import type { RawCollection } from '../../src/collect/types.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { CollectionBuilder, drive, user } from './collection-builder.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

// Names with multi-byte characters: the digest must be of the UTF-8 bytes written, not of UTF-16 text.
function collection() {
  const users = Array.from({ length: EXPORT_BATCH * 2 + 7 }, (_, i) =>
    user({ id: `u${String(i).padStart(4, '0')}`, firstName: i % 3 ? 'Zoë' : '李', lastName: '😀' }),
  );
  return new CollectionBuilder({ realms: ['libvirt'] })
    .with('users', users)
    .with('drives', [drive({ id: 'd1', name: 'déjà vu' })])
    .build();
}

/**
 * The streamed writer's files are, byte for byte, serializeExport over the
 * in-memory build: compared as bytes, so a changed byte anywhere (an encoding,
 * a separator between batches, a missing newline) fails, not only a changed
 * character.
 */
function expectStreamedBytes(
  dir: string,
  exports: readonly { export: string; file: string }[],
  c: RawCollection,
): void {
  const whole = buildAll(c).exports;
  expect(exports).toHaveLength(whole.length);
  for (const [i, e] of exports.entries()) {
    const expected = Buffer.from(serializeExport(whole[i]!), 'utf8');
    const actual = readFileSync(join(dir, e.file));
    expect(actual.length, e.export).toBe(expected.length);
    expect(actual.equals(expected), e.export).toBe(true);
  }
}

describe('export hashes in the snapshot manifest', () => {
  it('are the sha256 of each file as written, hashed while streaming', async () => {
    const staging = await createStaging(join(tmpDir(), 'snap'));
    try {
      const written = await writeExports(staging, build(collection()), '2026-11-21');
      expect(written.exports).toHaveLength(15);
      for (const e of written.exports) {
        expect(e.sha256, e.export).toMatch(/^[0-9a-f]{64}$/);
        expect(e.sha256, e.export).toBe(sha256(readFileSync(join(staging.dir, e.file))));
      }
      // An empty export is hashed too: its file is "[]\n".
      const empty = written.exports.find((e) => e.count === 0)!;
      expect(empty.sha256).toBe(sha256('[]\n'));
    } finally {
      staging.discard();
    }
  });

  it('are the same for the streamed files and the in-memory build', async () => {
    const c = collection();
    const staging = await createStaging(join(tmpDir(), 'snap'));
    try {
      const written = await writeExports(staging, build(c), c.manifest.date);
      const { files, manifest } = snapshotFiles(c, buildAll(c), 'replay', false, true);
      expect(manifest.exports.map((e) => e.sha256)).toEqual(written.exports.map((e) => e.sha256));
      for (const [i, f] of files.entries()) expect(manifest.exports[i]!.sha256).toBe(sha256(f.content));
      expectStreamedBytes(staging.dir, written.exports, c);
    } finally {
      staging.discard();
    }
  });

  it.each(['platform-3.14.1', 'platform-3.13.8'])(
    'are of files whose bytes are serializeExport over the in-memory build, for the recording %s',
    async (name) => {
      const staging = await createStaging(join(tmpDir(), 'snap'));
      try {
        const read = () => readCollection(join(REPO_ROOT, 'recordings', name), { checkBodies: true });
        const written = await writeExports(staging, build(await read()), '2026-11-21');
        expect(written.exports.some((e) => e.count > 0)).toBe(true);
        expectStreamedBytes(staging.dir, written.exports, await read());
      } finally {
        staging.discard();
      }
    },
  );

  it('are carried into the manifest, which its zod schema accepts, and required by it', async () => {
    const c = collection();
    const staging = await createStaging(join(tmpDir(), 'snap'));
    try {
      const written = await writeExports(staging, build(c), c.manifest.date);
      const manifest = snapshotManifest(c, written, 'live', false, true);
      expect(manifest.exports.map((e) => e.sha256)).toEqual(written.exports.map((e) => e.sha256));
      expect(SnapshotManifestSchema.safeParse(JSON.parse(JSON.stringify(manifest))).success).toBe(true);
      const { sha256: _dropped, ...withoutHash } = manifest.exports[0]!;
      expect(SnapshotManifestSchema.safeParse({ ...manifest, exports: [withoutHash] }).success).toBe(false);
      expect(
        SnapshotManifestSchema.safeParse({ ...manifest, exports: [{ ...withoutHash, sha256: 'ABC' }] }).success,
      ).toBe(false);
    } finally {
      staging.discard();
    }
  });
});
