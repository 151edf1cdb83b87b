/**
 * The manifest's `files` taken from the bytes as they are written
 * (hashingWriter) equal what listedFiles reads back from the directory:
 * text outside Latin-1 in many chunks, bytes, an empty file, a file written
 * twice.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStaging } from '../../src/publish/staging.js';
import { hashingWriter, listedFiles } from '../../src/snapshot/listed-files.js';
import { tmpDir } from '../helpers/run-cli.js';

describe('files hashed as they are written', () => {
  it('list the size and sha256 listedFiles reads back from the directory', async () => {
    const staging = await createStaging(join(tmpDir(), 'snapshot'));
    try {
      const w = hashingWriter(staging);
      const text = Array.from({ length: 5000 }, (_, i) => `ligne ${i} é 生物 🧬\n`);
      await w.writeChunks('a.csv', text);
      await w.writeChunks('b.bin', [Buffer.from([0, 1, 2, 255]), 'x', new Uint8Array(70_000).fill(7)]);
      await w.writeChunks('empty', []);
      await w.writeChunks('twice', ['first']);
      await w.writeChunks('twice', ['second, longer']);
      const names = ['a.csv', 'b.bin', 'empty', 'twice'];
      expect(w.files.map((f) => f.name)).toEqual(names);
      expect(w.files).toEqual(await listedFiles(staging.dir, names));
      // Given as hashed, a file is not read again: what was given is listed.
      const given = { name: 'a.csv', bytes: 1, sha256: '0'.repeat(64) };
      expect(await listedFiles(staging.dir, ['empty', 'a.csv'], [given])).toEqual([w.files[2], given]);
    } finally {
      staging.discard();
    }
  });
});
