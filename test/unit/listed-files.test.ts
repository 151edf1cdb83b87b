/**
 * The manifest's `files` taken from the bytes as they are written
 * (hashingWriter) equal the size and sha256 of the files read back from the
 * directory (hashFile): text outside Latin-1 in many chunks, bytes, an empty
 * file, a file written twice.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStaging } from '../../src/publish/staging.js';
import { hashingWriter } from '../../src/snapshot/listed-files.js';
import { hashFile } from '../../src/util/safe-read.js';
import { tmpDir } from '../helpers/run-cli.js';

function readBack(dir: string, name: string) {
  const fd = openSync(join(dir, name), 'r');
  try {
    const { size, sha256 } = hashFile(fd);
    return { name, bytes: size, sha256 };
  } finally {
    closeSync(fd);
  }
}

describe('files hashed as they are written', () => {
  it('list the size and sha256 the files have once written', async () => {
    const staging = await createStaging(join(tmpDir(), 'snapshot'));
    try {
      const w = hashingWriter(staging);
      const text = Array.from({ length: 5000 }, (_, i) => `ligne ${i} é 生物 🧬\n`);
      await w.writeChunks('a.csv', text);
      await w.writeChunks('b.bin', [Buffer.from([0, 1, 2, 255]), 'x', new Uint8Array(70_000).fill(7)]);
      await w.writeChunks('empty', []);
      await w.writeChunks('twice', ['first']);
      await w.writeChunks('twice', ['second, longer']);
      await w.writeFile('whole', 'écrit en une fois');
      const names = ['a.csv', 'b.bin', 'empty', 'twice', 'whole'];
      expect(w.files.map((f) => f.name)).toEqual(names);
      expect(w.files).toEqual(names.map((n) => readBack(staging.dir, n)));
    } finally {
      staging.discard();
    }
  });
});
