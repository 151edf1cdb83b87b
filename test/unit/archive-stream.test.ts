/**
 * The differential test of the archive's native payload encryption and
 * decryption (src/archive/native-stream.ts): plaintexts ending on and
 * across chunk boundaries encrypted with the fast path on and off decrypt
 * (by age-encryption) to the same bytes; archives read with it on and off
 * give the same entries; damaged ones (a byte altered in each chunk, cut
 * short, cut on a chunk boundary) fail with the same words either way.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decrypter, Encrypter, generateX25519Identity, identityToRecipient } from 'age-encryption';
import { beforeAll, describe, expect, it } from 'vitest';
import { ArchiveProblem, readArchive } from '../../src/archive/read.js';
import { tarOf } from '../../src/archive/tar.js';
import { encryptTo } from '../../src/archive/write.js';
import { tmpDir } from '../helpers/run-cli.js';

let work: string;
let identity: string;
const archives: Record<string, string> = {};

/** `<work>/<name>.tar.age`: a tree whose files add up to about `bytes`, tarred and encrypted by age-encryption. */
async function archiveOf(name: string, sizes: number[]): Promise<string> {
  const dir = join(work, name);
  mkdirSync(join(dir, 'raw'), { recursive: true });
  sizes.forEach((n, i) => writeFileSync(join(dir, i % 2 ? 'raw' : '', `f${i}.json`), Buffer.alloc(n, 97 + (i % 26))));
  const e = new Encrypter();
  e.addRecipient(await identityToRecipient(identity));
  const chunks: Uint8Array[] = [];
  for await (const c of await e.encrypt(tarOf(dir, new Date('2026-11-21T02:00:00Z')))) chunks.push(c);
  const file = join(work, `${name}.tar.age`);
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

async function read(file: string, nativeStream: boolean) {
  try {
    const { contents } = await readArchive(file, [identity], true, nativeStream);
    return { top: contents.top, entries: [...contents.entries] };
  } catch (err) {
    if (err instanceof ArchiveProblem) return { problem: err.message };
    throw err;
  }
}

beforeAll(async () => {
  work = tmpDir('svc-archive-stream-');
  identity = await generateX25519Identity();
  // Tars of 1.5 KiB, exactly 64 KiB less the headers, 64 KiB and a little, several chunks.
  archives.small = await archiveOf('small', [10, 0]);
  archives.boundary = await archiveOf('boundary', [65536 - 2048]);
  archives.across = await archiveOf('across', [65536, 3]);
  archives.several = await archiveOf('several', [200_000, 70_000, 1]);
});

describe('the native payload decryption', () => {
  it.each(['small', 'boundary', 'across', 'several'])('reads the %s archive as age-encryption does', async (name) => {
    const native = await read(archives[name]!, true);
    expect(native).toEqual(await read(archives[name]!, false));
    expect(native.entries?.length).toBeGreaterThan(1);
  });

  it('fails on each damage with the same words as age-encryption', async () => {
    const whole = readFileSync(archives.several!);
    const header = whole.indexOf('\n--- ') + 48;
    const damaged: Buffer[] = [];
    for (const at of [header + 20, header + 16 + 65_552 + 100, whole.length - 5]) {
      const b = Buffer.from(whole);
      b[at]! ^= 1;
      damaged.push(b);
    }
    damaged.push(whole.subarray(0, whole.length - 1000), whole.subarray(0, header + 16 + 65_552 * 2));
    for (const [i, bytes] of damaged.entries()) {
      const file = join(work, `damaged-${i}.tar.age`);
      writeFileSync(file, bytes);
      const native = await read(file, true);
      expect(native.problem, `damage ${i}`).toBeDefined();
      expect(native).toEqual(await read(file, false));
    }
  });
});

describe('the native payload encryption', () => {
  it.each([0, 1, 65_535, 65_536, 65_537, 3 * 65_536, 200_003])(
    'encrypts %d bytes to what age-encryption decrypts, as its own encryption does',
    async (size) => {
      const plain = Buffer.alloc(size);
      for (let i = 0; i < size; i++) plain[i] = (i * 31) % 251;
      const recipient = await identityToRecipient(identity);
      const out: Buffer[] = [];
      const sizes: number[] = [];
      for (const nativeStream of [true, false]) {
        const stream = new Blob([plain]).stream();
        const chunks: Uint8Array[] = [];
        for await (const c of await encryptTo([recipient], stream, nativeStream)) chunks.push(c);
        const sealed = Buffer.concat(chunks);
        const d = new Decrypter();
        d.addIdentity(identity);
        out.push(Buffer.from(await d.decrypt(sealed)));
        sizes.push(sealed.length);
      }
      expect(out[0]!.equals(plain)).toBe(true);
      expect(out[1]!.equals(plain)).toBe(true);
      // The same framing: one X25519 stanza each, the same chunks.
      expect(sizes[0]).toBe(sizes[1]);
    },
  );
});
