/**
 * Array bodies parsed a slice at a time (src/body/slices.ts) against the
 * whole body parsed at once (one slice, the way every body was read before,
 * its fault described as describeJsonError describes the whole text's): the same values, the same refusals with the same messages
 * (positions, lines and columns of the whole body), and a build that writes
 * the same bytes and reports the same validation, drift and nulls, with
 * slices from 1 byte (a cut at every element) to a few hundred. Also: the
 * UTF-16 length the fault positions rest on, and large bodies left on disk
 * by readCollection.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { decodeBody } from '../../src/body/decode.js';
import { arraySlices, utf16Length } from '../../src/body/slices.js';
import { describeJsonError } from '../../src/util/json-error.js';
import { bufferReader } from '../../src/body/reader.js';
import { BodyFile } from '../../src/body/file.js';
import { readCollection } from '../../src/collect/replay.js';
import type { RawCollection } from '../../src/collect/types.js';
import { writeCollection } from '../../src/collect/write.js';
import { buildAll } from '../../src/exports/build.js';
import { CATALOG } from '../../src/exports/catalog.js';
import { FailedError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/run-cli.js';
import { fakeSiteCollection } from '../helpers/hostile-site.js';
import { builtOutput, RECORDING_COLLECTIONS, type NamedCollection } from '../helpers/build-output.js';
import { randomStream } from '../fake/prng.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const tmp = mkdtempSync(join(tmpdir(), 'svc-slices-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Slice sizes from a cut at every element to a few elements per slice. */
const SIZES = [1, 2, 3, 5, 8, 13, 40, 97, 256, 400];

/** A small deterministic PRNG (test/fake/prng.ts). */
const rng = (seed: number) => randomStream(seed);

/** Strings a cut must never fall inside of, and values of every JSON kind. */
const TRICKY = [
  '[',
  ']',
  '{',
  '}',
  ',',
  '],[',
  '},{',
  '{"id":',
  ',{"id":"x"}',
  'say "hi"',
  '\\',
  '[,',
  '\n\t',
  'é',
  '😀',
  '中文',
  '\u2028',
  '\u0000',
  '',
];
const TRICKY_VALUES: string[] = [
  ...TRICKY.map((t) => JSON.stringify(t)),
  '"\\u005b\\u002c\\ud83d\\ude00\\""',
  '[]',
  '{}',
  '[[1,[2,[3]]],{"a":[{"id":1},{"id":2}]}]',
  '{"id":"inner","list":[{"id":"a"},{"id":"b"}]}',
  '-0.5e-3',
  '1E+21',
  'true',
  'false',
  'null',
];

const SPACES = ['', ' ', '\n', '\r\n', '\t', ' \n  '];

/** A list body with the records as given, whitespace of every kind between elements, some records indented. */
function format(records: readonly unknown[], next: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const parts = records.map((r) => (next() < 0.2 ? JSON.stringify(r, null, 2) : JSON.stringify(r)));
  return `${pick(SPACES)}[${pick(SPACES)}${parts.map((p, i) => (i === 0 ? p : `${pick(SPACES)},${pick(SPACES)}${p}`)).join('')}${pick(SPACES)}]${pick(SPACES)}`;
}

/** Records with tricky strings and nested lists spliced in as new fields (drift) or over known ones (validation). */
function trickyRecords(records: Array<Record<string, unknown>>, next: () => number): unknown[] {
  return records.map((rec, i) => {
    const r = next();
    const keys = Object.keys(rec);
    const value = JSON.parse(TRICKY_VALUES[Math.floor(next() * TRICKY_VALUES.length)]!) as unknown;
    if (r < 0.3) return { ...rec, [`extra${i % 4}`]: value };
    if (r < 0.45 && keys.length > 1) return { ...rec, [keys[1 + Math.floor(next() * (keys.length - 1))]!]: value };
    return rec;
  });
}

/** Every route of the small fake site, reformatted and with tricky values; one route answers an empty list. */
function slicingSite(seed: number): RawCollection {
  const next = rng(seed);
  return fakeSiteCollection(seed, 'altvirt', (route, body) =>
    format(route === 'security-levels' ? [] : trickyRecords(body, next), next),
  );
}

function decodeVerdict(body: Buffer, sliceBytes: number): string {
  try {
    return `ok ${JSON.stringify(decodeBody('GET /api/drives', { shape: 'array' }, body, { quote: false, sliceBytes }))}`;
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
}

/** The verdict on the whole body parsed at once (one slice), whose fault is the one describeJsonError gives for the whole text. */
function wholeVerdict(body: Buffer): string {
  const verdict = decodeVerdict(body, Infinity);
  const text = body.toString('utf8');
  try {
    JSON.parse(text);
  } catch (e) {
    expect(verdict).toContain(`(${describeJsonError(e, text)})`);
  }
  return verdict;
}

/** The body with one random change: a byte removed, added or replaced, or the body cut short. */
function mutate(body: Buffer, next: () => number): Buffer {
  const at = Math.floor(next() * body.length);
  const bytes = [0x5b, 0x5d, 0x7b, 0x7d, 0x2c, 0x22, 0x5c, 0x3a, 0x20, 0x0a, 0x78, 0x30, 0x2d, 0xff, 0xc3, 0xa9, 0x00];
  const byte = Buffer.from([bytes[Math.floor(next() * bytes.length)]!]);
  const r = next();
  if (r < 0.3) return Buffer.concat([body.subarray(0, at), body.subarray(at + 1)]);
  if (r < 0.6) return Buffer.concat([body.subarray(0, at), byte, body.subarray(at)]);
  if (r < 0.9) return Buffer.concat([body.subarray(0, at), byte, body.subarray(at + 1)]);
  return body.subarray(0, at);
}

describe('an array body parsed a slice at a time', () => {
  const next = rng(7);
  const bodies: Buffer[] = [
    Buffer.from('[]'),
    Buffer.from(' \n[ \r\n\t]\n'),
    Buffer.from('[{"id":1}]'),
    Buffer.from('[{"id":"a,b"},{"id":"],["},{"id":"\\"},{\\"id\\":"}]'),
    Buffer.from('[\n  {"id": 1, "sub": [{"id": 2}, {"id": 3}]},\n  {"id": 4}\n]\n'),
    Buffer.from('[{"id":"é😀中"},{"id":"\\u005b\\u002c\\ud83d\\ude00"}]'),
    ...Array.from({ length: 12 }, (_, i) =>
      Buffer.from(
        format(
          trickyRecords(
            Array.from({ length: 4 + i }, (_, k) => ({ id: `r${k}`, n: k, s: 'x'.repeat(k * 7) })),
            next,
          ),
          next,
        ),
      ),
    ),
  ];

  it('gives the values of the whole body parsed at once, cut at every element and every few', () => {
    for (const body of bodies) {
      const whole = wholeVerdict(body);
      expect(whole.startsWith('ok '), body.toString()).toBe(true);
      expect(whole).toBe(`ok ${JSON.stringify(JSON.parse(body.toString('utf8')))}`);
      for (const bytes of SIZES)
        expect(decodeVerdict(body, bytes), `slices of ${bytes} ${body.toString()}`).toBe(whole);
    }
  });

  it('refuses what the whole body refuses, with the same message: the fault, its character, line and column in the whole body', () => {
    const refusals = new Set<string>();
    for (let n = 0; n < 400; n++) {
      const body = mutate(mutate(bodies[n % bodies.length]!, next), next);
      const whole = wholeVerdict(body);
      if (whole.startsWith('refused')) refusals.add(whole.replace(/\d+/g, 'N'));
      for (const bytes of SIZES)
        expect(decodeVerdict(body, bytes), `slices of ${bytes} ${JSON.stringify(body.toString('latin1'))}`).toBe(whole);
    }
    // The mutations reach the kinds of fault there are: positions with lines and columns, cut short, wrong elements.
    expect([...refusals].some((r) => r.includes('(line N, column N)'))).toBe(true);
    expect([...refusals].some((r) => r.includes('ends before the JSON is complete'))).toBe(true);
    expect([...refusals].some((r) => r.includes('array of objects but element N'))).toBe(true);
  });

  it('names the element of the whole body that is not an object, and reports a fault after it first, as the whole body does', () => {
    const body = Buffer.from('[{"id":1},\n{"id":2},\n3,\n{"id":4},\n{"id":5]');
    const noFault = Buffer.from('[{"id":1},\n{"id":2},\n3,\n{"id":4},\n{"id":5}]');
    for (const b of [body, noFault]) {
      const whole = wholeVerdict(b);
      for (const bytes of SIZES) expect(decodeVerdict(b, bytes)).toBe(whole);
    }
    expect(decodeVerdict(noFault, 1)).toContain('element 2 is a JSON number');
    expect(decodeVerdict(body, 1)).toContain('invalid JSON at character 41 (line 5, column 8)');
  });

  it('makes no string longer than a slice and an element from the body', () => {
    const records = Array.from({ length: 2000 }, (_, i) => ({ id: `drive-${i}`, name: `name ${i}`, size: i * 1000 }));
    const body = Buffer.from(JSON.stringify(records));
    const longest = Math.max(...records.map((r) => JSON.stringify(r).length));
    const toString = Buffer.prototype.toString;
    let made = 0;
    vi.spyOn(Buffer.prototype, 'toString').mockImplementation(function (this: Buffer, ...args: unknown[]) {
      const s = (toString as (...a: unknown[]) => string).apply(this, args);
      made = Math.max(made, s.length);
      return s;
    });
    const value = decodeBody('GET /api/drives', { shape: 'array' }, body, { sliceBytes: 4096 });
    expect(value).toEqual(records);
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(4096 + longest + 1);
  });
});

describe('a file parsed a slice at a time', () => {
  it('is read about twice over (the scan for a cut, then the slice), not a block per slice', () => {
    const records = Array.from({ length: 60_000 }, (_, i) => ({ id: `drive-${i}`, name: `name ${i}`, size: i * 1000 }));
    const bytes = Buffer.from(JSON.stringify(records, null, 2));
    const inner = bufferReader(bytes);
    let read = 0;
    const counting = {
      size: inner.size,
      read: (start: number, end: number) => {
        const b = inner.read(start, end);
        read += b.length;
        return b;
      },
    };
    const values = [...arraySlices(counting)].flat();
    expect(values).toEqual(records);
    expect(bytes.length).toBeGreaterThan(4 * 1024 * 1024);
    expect(read).toBeGreaterThanOrEqual(bytes.length);
    expect(read).toBeLessThan(3 * bytes.length);
  });
});

describe('the UTF-16 length of a range of bytes (what fault positions are counted in)', () => {
  it('is the length of the decoded text for any bytes, valid UTF-8 or not, cut anywhere a character starts', () => {
    const next = rng(3);
    const pieces = [
      [0x41],
      [0x0a],
      [0xc3, 0xa9],
      [0xe4, 0xb8, 0xad],
      [0xf0, 0x9f, 0x98, 0x80],
      [0xff],
      [0x80],
      [0xc3],
      [0xe4, 0xb8],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
    ];
    for (let n = 0; n < 8; n++) {
      const bytes: number[] = [];
      // Over a MB, so the count is made of several decoded blocks.
      while (bytes.length < 1024 * 1024 + 5000) bytes.push(...pieces[Math.floor(next() * pieces.length)]!);
      const b = Buffer.from(bytes);
      expect(utf16Length(bufferReader(b), 0, b.length)).toBe(b.toString('utf8').length);
    }
  });
});

const COLLECTIONS: NamedCollection[] = [
  ...RECORDING_COLLECTIONS,
  ['a fake site with tricky strings, nested lists, whitespace and an empty list (seed 1)', () => slicingSite(1)],
  ['a fake site with tricky strings, nested lists, whitespace and an empty list (seed 2)', () => slicingSite(2)],
];

describe.each(COLLECTIONS)('the build over %s', (_name, load) => {
  it('writes the same bytes, validation, drift and nulls with slices of every size as with the whole body', async () => {
    const c = await load();
    const expected = builtOutput(c, { sliceBytes: Infinity });
    for (const bytes of [1, 5, 40, 400]) {
      const got = builtOutput(c, { sliceBytes: bytes });
      expect(got.rest, `slices of ${bytes}`).toBe(expected.rest);
      got.files.forEach((f, i) => expect(f, `${CATALOG[i]!.name}, slices of ${bytes}`).toBe(expected.files[i]));
    }
  });
});

describe('a large body read back from a collection', () => {
  const source = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

  function copy(name: string): string {
    const dir = join(tmp, name);
    cpSync(source, dir, { recursive: true });
    return dir;
  }

  it('stays on disk until the build reads it, and builds the same bytes', async () => {
    const dir = copy('on-disk');
    const inMemory = await readCollection(dir);
    const onDisk = await readCollection(dir, { largeBodyBytes: 1 });
    const files = [...onDisk.bodies.values()];
    expect(files.some((b) => b instanceof BodyFile)).toBe(true);
    // The realm list does not open an array: it is read whole.
    expect(files.some((b) => Buffer.isBuffer(b))).toBe(true);
    expect(builtOutput(onDisk, { sliceBytes: 97 })).toEqual(builtOutput(inMemory));
  });

  it('is copied byte for byte into raw/, and its sha256 checked on the way', async () => {
    const dir = copy('copied');
    const c = await readCollection(dir, { largeBodyBytes: 1 });
    const out = join(tmp, 'copied-out');
    const writes = new Map<string, Buffer>();
    const staging = {
      dir: out,
      writeFile: async (rel: string, data: string | Uint8Array) => void writes.set(rel, Buffer.from(data)),
      writeChunks: async (rel: string, chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>) => {
        const parts: Buffer[] = [];
        for await (const chunk of chunks) parts.push(Buffer.from(chunk));
        writes.set(rel, Buffer.concat(parts));
      },
      discard: () => {},
      secrets: [],
      searched: new Map<string, string>(),
    };
    await writeCollection(staging, c, 'raw/');
    for (const r of c.manifest.routes)
      if (r.file !== null) expect(writes.get(`raw/${r.file}`)!.equals(readFileSync(join(dir, r.file)))).toBe(true);
    const drives = c.manifest.routes.find((r) => r.route === 'GET /api/drives')!;
    writeFileSync(join(dir, drives.file!), readFileSync(join(dir, drives.file!)).toString().replace('drive', 'drivf'));
    await expect(writeCollection(staging, c, 'raw/')).rejects.toThrow(
      /does not match the sha256.*refusing to build from it/,
    );
  });

  it('is refused, not built from, when it changes after the collection was read', async () => {
    const dir = copy('changed');
    const c = await readCollection(dir, { largeBodyBytes: 1, checkBodies: false });
    const drives = c.manifest.routes.find((r) => r.route === 'GET /api/drives')!;
    const text = readFileSync(join(dir, drives.file!), 'utf8');
    // Same length, still JSON: only the digest tells.
    writeFileSync(join(dir, drives.file!), text.replace('drive', 'drivf'));
    expect(() => buildAll(c)).toThrow(FailedError);
    expect(() => buildAll(c)).toThrow(/drives\.json in .* does not match the sha256 .* refusing to build from it/);
  });

  it('fails its route with the message a body in memory gets when it is not JSON', async () => {
    const dir = copy('broken');
    const manifestFile = join(dir, '_collection-manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
      routes: Array<{ route: string; file: string | null; sha256?: string; bytes?: number }>;
    };
    const drives = manifest.routes.find((r) => r.route === 'GET /api/drives')!;
    const broken = Buffer.from(`${readFileSync(join(dir, drives.file!), 'utf8').slice(0, -40)}\n,]`);
    writeFileSync(join(dir, drives.file!), broken);
    const { createHash } = await import('node:crypto');
    drives.sha256 = createHash('sha256').update(broken).digest('hex');
    drives.bytes = broken.length;
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    const inMemory = await readCollection(dir);
    const onDisk = await readCollection(dir, { largeBodyBytes: 1 });
    const failed = (c: RawCollection) => c.manifest.routes.find((r) => r.route === 'GET /api/drives')!.error;
    expect(failed(inMemory)).toMatch(
      /^expected JSON but received \d+ bytes that do not parse \(invalid JSON at character \d+ \(line \d+, column \d+\)\)/,
    );
    expect(failed(onDisk)).toBe(failed(inMemory));
    expect(readdirSync(dir)).toContain(drives.file);
  });
});
