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
    const files = unzip(await zipOf([['a.xml', [big, 'x', big.slice(0, 12345)]], ['b/c.xml', small], ['empty', []]]));
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
});
