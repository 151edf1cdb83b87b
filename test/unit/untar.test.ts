/**
 * The tar reader of archives (src/archive/untar.ts): tars GNU tar makes in
 * each of its formats (ustar with a name split into its prefix, gnu with a
 * long name entry, pax with extended headers) read to the same entries
 * whatever the pieces they come in; and hostile tars (a wrong checksum, a
 * size that is no number, a damaged pax record, a long name past any
 * name, cut inside a header or an entry) refused with the reason.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tarReader, TarProblem, type TarHeader } from '../../src/archive/untar.js';
import { tmpDir } from '../helpers/run-cli.js';

const LONG = `${'d'.repeat(90)}/${'n'.repeat(90)}.json`;
let work: string;

/** Each entry read from `bytes` fed in pieces of `piece` bytes: name, type, size and sha256 of its data. */
function read(bytes: Buffer, piece = bytes.length) {
  const out: Array<TarHeader & { sha256: string }> = [];
  const tar = tarReader((header) => {
    const hash = createHash('sha256');
    return { data: (p) => hash.update(p), end: () => out.push({ ...header, sha256: hash.digest('hex') }) };
  });
  for (let at = 0; at < bytes.length; at += piece) tar.write(bytes.subarray(at, at + piece));
  tar.end();
  return out;
}

function problem(bytes: Buffer): string {
  try {
    read(bytes);
  } catch (err) {
    if (err instanceof TarProblem) return err.message;
    throw err;
  }
  return 'read';
}

const tarOf = (format: string) => execFileSync('tar', ['-c', `--format=${format}`, '-C', work, 'top']);

beforeAll(() => {
  work = tmpDir('svc-untar-');
  mkdirSync(join(work, 'top', 'd'.repeat(90)), { recursive: true });
  writeFileSync(join(work, 'top', 'a.json'), 'x'.repeat(1000));
  writeFileSync(join(work, 'top', 'empty'), '');
  writeFileSync(join(work, 'top', LONG), Buffer.alloc(70_000, 7));
  execFileSync('ln', ['-s', 'a.json', join(work, 'top', 'link')]);
});

describe('the tar reader', () => {
  it.each(['ustar', 'gnu', 'pax'])('reads the %s format of GNU tar, in any pieces', (format) => {
    const bytes = tarOf(format);
    const entries = read(bytes);
    const byName = new Map(entries.map((e) => [e.name.replace(/\/$/, ''), e]));
    expect(byName.get('top')?.type).toBe('directory');
    expect(byName.get('top/a.json')).toMatchObject({ type: 'file', size: 1000 });
    expect(byName.get('top/empty')).toMatchObject({ type: 'file', size: 0 });
    expect(byName.get('top/link')?.type).toBe('symbolic link');
    expect(byName.get(`top/${LONG}`)).toMatchObject({
      type: 'file',
      size: 70_000,
      sha256: createHash('sha256').update(Buffer.alloc(70_000, 7)).digest('hex'),
    });
    for (const piece of [1, 7, 511, 513, 65_536]) expect(read(bytes, piece)).toEqual(entries);
  });

  it('refuses a hostile or damaged tar, saying why', () => {
    const good = tarOf('pax');
    const changed = (at: number, text: string) => {
      const b = Buffer.from(good);
      b.write(text, at, 'latin1');
      return b;
    };
    const notTar = /^not an archive of an output: what age decrypts is not a tar$/;
    expect(problem(changed(0, 'X'))).toMatch(notTar);
    // A size that is no octal number, with the checksum made right again.
    const badSize = changed(124, '0000000009x ');
    let sum = 8 * 32;
    for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += badSize[i]!;
    badSize.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    expect(problem(badSize)).toMatch(notTar);
    expect(problem(Buffer.alloc(1024, 'not a tar'))).toMatch(notTar);
    const cut = /^cut: the tar inside ends early/;
    expect(problem(good.subarray(0, 700))).toMatch(cut);
    expect(problem(good.subarray(0, 1536 + 100))).toMatch(cut);
  });

  it('refuses a pax record that is no record and a long name past any name', () => {
    const header = (flag: string, size: number) => {
      const b = Buffer.alloc(512);
      b.write('top/x', 0);
      b.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
      b.write(flag, 156, 'latin1');
      b.write('ustar\x0000', 257, 'latin1');
      b.fill(32, 148, 156);
      let sum = 0;
      for (const c of b) sum += c;
      b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
      return b;
    };
    const record = Buffer.alloc(512);
    record.write('99 path=top/x\n');
    expect(problem(Buffer.concat([header('x', 14), record, Buffer.alloc(1024)]))).toMatch(/not a tar/);
    expect(problem(Buffer.concat([header('L', 2 * 1024 * 1024), Buffer.alloc(1024)]))).toMatch(/not a tar/);
  });
});
