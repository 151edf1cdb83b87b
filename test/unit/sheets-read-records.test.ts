/**
 * Snapshot.records (src/snapshot/dir.ts), which the spreadsheets, `convert`
 * and the findings read every export file with: parsed a slice at a time, it
 * must give what JSON.parse of the whole file gives, and refuse what it
 * refuses, with the same messages as before; and Snapshot.parse of the same
 * bytes read whole must give the same.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Snapshot, type ManifestEntry } from '../../src/snapshot/dir.js';
import type { ReadableManifest } from '../../src/manifests.js';
import { tmpDir } from '../helpers/run-cli.js';

function entry(file: string, count: number): ManifestEntry {
  return { export: 'drives', file, count, available: true };
}

async function read(text: string, count: number, sha256?: string, columns?: readonly string[]): Promise<unknown> {
  const dir = tmpDir();
  writeFileSync(join(dir, 'x.json'), text);
  const e = { ...entry('x.json', count), ...(sha256 !== undefined ? { sha256 } : {}) };
  // A staged snapshot (no manifest bytes) reads its own files unchecked.
  const snapshot = new Snapshot(
    dir,
    { exports: [e] } as unknown as ReadableManifest,
    sha256 !== undefined ? Buffer.from('{}') : undefined,
  );
  let records: unknown;
  try {
    records = await snapshot.records(e, columns);
  } catch (err) {
    records = `refused: ${(err as Error).message.replace(dir, 'DIR')}`;
  }
  let whole: unknown;
  try {
    whole = snapshot.parse(e, Buffer.from(text), columns);
  } catch (err) {
    whole = `refused: ${(err as Error).message.replace(dir, 'DIR')}`;
  }
  // The bytes read whole are checked by Snapshot.bytes: parse only says what the records say.
  if (sha256 === undefined || !String(records).includes('sha256')) expect(whole).toEqual(records);
  return records;
}

describe('reading an export file back', () => {
  it('gives the records JSON.parse gives, over many slices of text outside Latin-1, escapes and nesting', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({
      id: `d${i}`,
      name: `Données ${i} 🧬 "x" \\ \n\t\u0007 生物情報学`,
      settings: i % 3 ? null : '{"a":{"b":[1,2]}}',
      readers: [`u${i}`, 'é'],
      n: i / 7,
    }));
    const text = `${JSON.stringify(records, null, 2)}\n`;
    expect(text.length).toBeGreaterThan(500_000);
    expect(await read(text, records.length)).toEqual(JSON.parse(text));
    expect(await read('[]\n', 0)).toEqual([]);
  });

  it('refuses a file that is not JSON, not an array of records, or holds another count, as before', async () => {
    const big = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: `d${i}`, pad: 'x'.repeat(50) })));
    expect(await read(big.slice(0, -300), 2000)).toBe(
      'refused: x.json in DIR is not valid JSON; the snapshot is damaged',
    );
    expect(await read(`${big} trailing`, 2000)).toBe(
      'refused: x.json in DIR is not valid JSON; the snapshot is damaged',
    );
    expect(await read(big.replace('},{', '},,{'), 2000)).toBe(
      'refused: x.json in DIR is not valid JSON; the snapshot is damaged',
    );
    expect(await read('<html>', 0)).toBe('refused: x.json in DIR is not valid JSON; the snapshot is damaged');
    for (const t of ['{"a":1}', 'null', '"text"', '3'])
      expect(await read(t, 0)).toBe('refused: x.json in DIR is not a JSON array of records; the snapshot is damaged');
    expect(await read('[{"a":1},[2]]', 2)).toBe(
      'refused: x.json in DIR: element 1 is not a record; the snapshot is damaged',
    );
    expect(await read('[{"a":1},null]', 2)).toBe(
      'refused: x.json in DIR: element 1 is not a record; the snapshot is damaged',
    );
    expect(await read(big, 1999)).toBe(
      'refused: x.json in DIR holds 2000 records where _snapshot-manifest.json says 1999; the snapshot is damaged',
    );
  });

  it('checks the sha256 of every byte, read a slice at a time: a change of whitespace alone, anywhere, is refused', async () => {
    const records = Array.from({ length: 4000 }, (_, i) => ({ id: `d${i}`, name: `drive ${i} é`, n: i }));
    const text = `${JSON.stringify(records, null, 2)}\n`;
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    expect(text.length).toBeGreaterThan(4 * 64 * 1024);
    expect(await read(text, records.length, sha(text))).toEqual(records);
    const changedText =
      'refused: x.json in DIR does not match the sha256 in _snapshot-manifest.json; the file was changed after the snapshot was taken';
    // The same records, other bytes: between two slices (the commas), inside one, and the very last byte.
    const middle = text.indexOf('\n  },\n  {', text.length >> 1);
    for (const changed of [
      text.replace(/\n {2}\},\n {2}\{/g, '\n  },\n \t{'),
      `${text.slice(0, middle)}\n \t},${text.slice(middle + 5)}`,
      `${text.slice(0, -1)} `,
    ]) {
      expect(JSON.parse(changed)).toEqual(records);
      expect(await read(changed, records.length, sha(text))).toBe(changedText);
      // Not checked when the caller wrote the file itself (verify: false).
      expect(await read(changed, records.length)).toEqual(records);
    }
    // A damaged file whose hash does not match either: the hash is what is said.
    expect(await read(text.slice(0, -300), records.length, sha(text))).toBe(changedText);
  });

  it('with columns, keeps of each record only those, in that order, a missing or undefined one null, and refuses what the whole read refuses', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({
      id: `d${i}`,
      name: `Données ${i} 生物`,
      expires: i % 4 ? i * 1000 : null,
      readers: [`u${i}`],
      ...(i % 5 ? { extra: true } : {}),
    }));
    const text = `${JSON.stringify(records, null, 2)}\n`;
    const sha = createHash('sha256').update(text).digest('hex');
    const kept = (await read(text, records.length, sha, ['extra', 'id', 'readers', 'absent'])) as Array<
      Record<string, unknown>
    >;
    expect(kept).toHaveLength(records.length);
    kept.forEach((r, i) => {
      expect(Object.keys(r)).toEqual(['extra', 'id', 'readers', 'absent']);
      expect(r).toEqual({
        extra: records[i]!.extra ?? null,
        id: records[i]!.id,
        readers: records[i]!.readers,
        absent: null,
      });
    });
    const cols = ['id'];
    const big = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: `d${i}`, pad: 'x'.repeat(50) })));
    expect(await read(big.slice(0, -300), 2000, undefined, cols)).toBe(
      'refused: x.json in DIR is not valid JSON; the snapshot is damaged',
    );
    expect(await read('{"a":1}', 0, undefined, cols)).toBe(
      'refused: x.json in DIR is not a JSON array of records; the snapshot is damaged',
    );
    expect(await read('[{"a":1},[2]]', 2, undefined, cols)).toBe(
      'refused: x.json in DIR: element 1 is not a record; the snapshot is damaged',
    );
    expect(await read(big.replace('{"id":"d1500"', '7,{"id":"d1500"'), 2001, undefined, cols)).toBe(
      'refused: x.json in DIR: element 1500 is not a record; the snapshot is damaged',
    );
    expect(await read(big, 1999, undefined, cols)).toBe(
      'refused: x.json in DIR holds 2000 records where _snapshot-manifest.json says 1999; the snapshot is damaged',
    );
    // A file changed after the element that is not a record: the hash is what is said.
    const bad = big.replace('{"id":"d3"', 'null,{"id":"d3"');
    expect(await read(`${bad.slice(0, -2)} ]`, 2001, createHash('sha256').update(bad).digest('hex'), cols)).toBe(
      'refused: x.json in DIR does not match the sha256 in _snapshot-manifest.json; the file was changed after the snapshot was taken',
    );
  });
});
