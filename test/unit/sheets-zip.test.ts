import { randomBytes } from 'node:crypto';
import { constants, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ZipWriter } from '../../src/sheets/zip.js';
import { unzip } from '../helpers/unzip.js';

async function zipOf(entries: Array<[string, string[]]>, inspect?: (b: Buffer) => void, overlap = 0): Promise<Buffer> {
  const zip = new ZipWriter(new Date(Date.UTC(2026, 10, 21, 2, 0, 0)), inspect, overlap);
  const parts: Buffer[] = [];
  for (const [name, pieces] of entries) for await (const b of zip.entry(name, pieces)) parts.push(b);
  parts.push(zip.end());
  return Buffer.concat(parts);
}

describe('the ZIP writer', () => {
  it('writes entries of several compressed blocks that read back byte for byte, multi-byte characters across block ends included', async () => {
    // 3 MB of text in pieces large and small; emoji are surrogate pairs in UTF-16 and 4 bytes in UTF-8.
    const big = 'Zoë 😀 Weiß, '.repeat(250_000);
    const small = Array.from({ length: 5000 }, (_, i) => `<row r="${i}">é😀</row>`);
    const files = unzip(
      await zipOf([
        ['a.xml', [big, 'x', big.slice(0, 12345)]],
        ['b/c.xml', small],
        ['empty', []],
      ]),
    );
    expect(files.get('a.xml')!.toString('utf8')).toBe(`${big}x${big.slice(0, 12345)}`);
    expect(files.get('b/c.xml')!.toString('utf8')).toBe(small.join(''));
    expect(files.get('empty')!.length).toBe(0);
  });

  it('shows every byte to the inspector with the tail of the block before, so a needle across a block end is seen', async () => {
    const needle = Buffer.from('SECRET-TOKEN-VALUE');
    const filler = 'x'.repeat((1 << 20) - 7);
    // The block is full after 'SECRET-': the rest of the needle starts the next block.
    const pieces = [filler, 'SECRET-', 'TOKEN-VALUE', 'y'.repeat(100)];
    const blocks: Buffer[] = [];
    await zipOf([['s.xml', pieces]], (b) => blocks.push(Buffer.from(b)), needle.length - 1);
    expect(blocks.length).toBe(2);
    expect(blocks[0]!.includes(needle)).toBe(false);
    expect(blocks[1]!.includes(needle)).toBe(true);
    // Without the overlap, no block holds it whole.
    const bare: Buffer[] = [];
    await zipOf([['s.xml', pieces]], (b) => bare.push(Buffer.from(b)));
    expect(bare.some((b) => b.includes(needle))).toBe(false);
  });

  it('keeps every block whole while it is compressed, the two blocks taking turns, with an overlap carried across each end', async () => {
    // Five blocks, a needle across each of the first four ends: each carried tail lands in the other block.
    const needle = 'SECRET-TOKEN-VALUE';
    const pieces: string[] = [];
    for (let b = 0; b < 4; b++)
      pieces.push(`${b}`.repeat((1 << 20) - 7 - (b === 0 ? 0 : needle.length - 7)), 'SECRET-', 'TOKEN-VALUE');
    pieces.push('z'.repeat(5000));
    const blocks: Buffer[] = [];
    const files = unzip(await zipOf([['s.xml', pieces]], (b) => blocks.push(Buffer.from(b)), needle.length - 1));
    expect(files.get('s.xml')!.toString('utf8')).toBe(pieces.join(''));
    expect(blocks.length).toBe(5);
    expect(blocks.map((b) => b.includes(needle))).toEqual([false, true, true, true, true]);
  });

  it('compresses to the same bytes whatever the output chunk size: each 1 MiB block as zlib gives it with its default 16 kB chunks', async () => {
    // Sheet-like rows, then incompressible text (its compressed form is larger than its input).
    const rows = Array.from(
      { length: 30_000 },
      (_, i) => `<row r="${i + 2}"><c r="A${i + 2}" t="inlineStr"><is><t>user-${(i * 7919) % 10007}</t></is></c></row>`,
    );
    const noise = Array.from({ length: 40 }, () => randomBytes(30_000).toString('base64'));
    const pieces = [...rows, ...noise];
    // The inspector sees each uncompressed block (no overlap asked for).
    const uncompressed: Buffer[] = [];
    const zip = new ZipWriter(new Date(Date.UTC(2026, 10, 21)), (b) => uncompressed.push(Buffer.from(b)));
    const out: Buffer[] = [];
    for await (const b of zip.entry('s.xml', pieces)) out.push(b);
    // header, compressed blocks, the final empty block, the data descriptor
    const blocks = out.slice(1, -2);
    const expected = uncompressed.map((b) => deflateRawSync(b, { level: 1, finishFlush: constants.Z_SYNC_FLUSH }));
    expect(Buffer.concat(uncompressed).toString('utf8')).toBe(pieces.join(''));
    expect(expected.length).toBeGreaterThan(2);
    expect(blocks.length).toBe(expected.length);
    expect(Buffer.concat(blocks).equals(Buffer.concat(expected))).toBe(true);
  });
});
