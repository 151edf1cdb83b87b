import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotFiles, snapshotManifest } from '../../src/exports/manifest.js';
import { SnapshotManifestSchema } from '../../src/exports/manifest.js';
import { build, buildAll } from '../../src/exports/build.js';
import { EXPORT_BATCH, serializeExport } from '../../src/exports/serialize.js';
import { writeExports } from '../../src/publish/snapshot-files.js';
import { createStaging } from '../../src/publish/index.js';
import { tmpDir } from '../helpers/run-cli.js';
import { CollectionBuilder, drive, user } from './collection-builder.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

// Names with multi-byte characters: the digest must be of the UTF-8 bytes written, not of UTF-16 text.
function collection() {
  const users = Array.from({ length: EXPORT_BATCH * 2 + 7 }, (_, i) => user({ id: `u${String(i).padStart(4, '0')}`, firstName: i % 3 ? 'Zoë' : '李', lastName: '😀' }));
  return new CollectionBuilder({ realms: ['libvirt'] })
    .with('users', users)
    .with('drives', [drive({ id: 'd1', name: 'déjà vu' })])
    .build();
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
      // The streamed writer's bytes are those of serializeExport over the in-memory build.
      const whole = buildAll(c).exports;
      for (const [i, e] of written.exports.entries()) expect(readFileSync(join(staging.dir, e.file), 'utf8'), e.export).toBe(serializeExport(whole[i]!));
    } finally {
      staging.discard();
    }
  });

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
      expect(SnapshotManifestSchema.safeParse({ ...manifest, exports: [{ ...withoutHash, sha256: 'ABC' }] }).success).toBe(false);
    } finally {
      staging.discard();
    }
  });
});
