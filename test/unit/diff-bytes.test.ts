/**
 * The diff of two snapshot export files from their bytes (src/diff/bytes.ts)
 * gives exactly what the diff of the files parsed whole gives: for random
 * pairs of record lists as the serializer writes them, and for files it does
 * not write (then the files are parsed whole, with the errors that gives).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXPORTS } from '../../src/exports/catalog.js';
import type { ExportDef } from '../../src/exports/define.js';
import { sortRecords } from '../../src/exports/order.js';
import { exportFileName, serializeBatches, serializeExport } from '../../src/exports/serialize.js';
import type { ExportRecord } from '../../src/exports/types.js';
import { diffExport } from '../../src/diff/compare.js';
import { keyAt, matchRecordKeys, readKeys, sameBytes, type RecordKeys } from '../../src/diff/bytes.js';
import { walkNewer } from '../../src/diff/walk-newer.js';
import { twoNights } from '../helpers/two-nights.js';
import { recordRanges } from '../../src/snapshot/records.js';
import { matchKeys } from '../../src/diff/match.js';
import { diffDirectories, resolveIgnore } from '../../src/diff/index.js';
import { describeJsonError } from '../../src/util/json-error.js';
import type { ExportDiff, LoadedExport } from '../../src/diff/types.js';
import { FailedError } from '../../src/errors.js';
import { tmpDir } from '../helpers/run-cli.js';
import { rewriteExport, writeSnapshot } from '../helpers/snapshot-dir.js';

const def = (name: string): ExportDef => EXPORTS.find((e) => e.name === name)!;

/** The file's record ranges when it holds `count` records in the serializer's layout. */
function splitRecords(bytes: Buffer, count: number) {
  const ranges = recordRanges(bytes);
  return ranges?.starts.length === count ? ranges : undefined;
}

/** A side as a snapshot gives it: the file's bytes, its parse counted (the byte path parses none of a file in the serializer's layout). */
function fileSide(text: string, count: number, nullColumns: ReadonlySet<string>, parses: { n: number }): LoadedExport {
  const bytes = Buffer.from(text);
  const parse = () => {
    parses.n++;
    return JSON.parse(bytes.toString('utf8')) as ExportRecord[];
  };
  return { available: true, records: [], file: { bytes, count, parse }, nullColumns };
}

/** The same side parsed whole: what the diff compared before reading bytes. */
const parsedSide = (text: string, nullColumns: ReadonlySet<string>): LoadedExport => ({
  available: true,
  records: JSON.parse(text) as ExportRecord[],
  nullColumns,
});

function bothWays(
  d: ExportDef,
  olderText: string,
  newerText: string,
  counts: [number, number],
  opts: { nulls?: ReadonlySet<string>; ignored?: ReadonlySet<string> } = {},
) {
  const nulls = opts.nulls ?? new Set<string>();
  const parses = { n: 0 };
  const fast = diffExport(
    d,
    fileSide(olderText, counts[0], nulls, parses),
    fileSide(newerText, counts[1], new Set(), parses),
    opts.ignored,
  );
  const whole = diffExport(d, parsedSide(olderText, nulls), parsedSide(newerText, new Set()), opts.ignored);
  return { fast, whole, parses: parses.n };
}

// ---------------------------------------------------------------- generated pairs

const ABSENT = Symbol('absent');

/** Key values of every JSON type, few enough that keys repeat and match: non-ASCII, quotes, backslashes, and the text between two records. */
const keyValue = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('a', 'b', 'c', 'id-1', 'id-2', 'ID-1', 'proj|0003', 'proj|0003-x', ' lead', 'a '),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'é',
      '😀',
      'x"y',
      'a\\b',
      '\n  },\n  {\n',
      '\n    "id": "a"',
      '',
      '\u0000',
      '\u0001"1"',
      '\u0002',
      '\u2028',
      'ab\u007f',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(1, 0, -0, 1.5, 1e21, -1, true, false, null, ABSENT, [], {}, [1, 'a'], { k: 1 }),
  },
);
const asciiKey = fc.constantFrom(
  'a',
  'b',
  'c',
  'd',
  'id-1',
  'id-10',
  'id-2',
  'proj|0003',
  'proj|0003-x',
  'x y',
  '~',
  ' ',
);
const otherValue = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    ABSENT,
    0,
    1,
    -0,
    1e21,
    'x',
    'y',
    'é',
    'a\\"b',
    '\n  }\n]\n',
    true,
    false,
    [],
    [1, 2],
    [2, 1],
    { a: 1 },
    { id: 'a' },
    '',
  ),
  fc.string({ maxLength: 6 }),
  fc.integer(),
);

function recordOf(d: ExportDef, key: fc.Arbitrary<unknown>): fc.Arbitrary<ExportRecord> {
  const cols = d.columns.map((c) => c.name).slice(0, 6);
  for (const k of d.key) if (!cols.includes(k)) cols.push(k);
  return fc
    .oneof(
      { weight: 20, arbitrary: fc.tuple(fc.boolean(), ...cols.map((c) => (d.key.includes(c) ? key : otherValue))) },
      // The empty record, and a record whose key holds the other side's layout in a nested value.
      { weight: 1, arbitrary: fc.constant([false] as [boolean, ...unknown[]]) },
    )
    .map(([reversed, ...values]) => {
      const entries = cols.map((c, i) => [c, values[i] ?? ABSENT] as const).filter(([, v]) => v !== ABSENT);
      return Object.fromEntries(reversed ? entries.reverse() : entries) as ExportRecord;
    });
}

/** Older records, and newer ones made of them: the same, changed, dropped, or new. */
function pairOf(d: ExportDef, key: fc.Arbitrary<unknown>, sorted: boolean, unique: boolean) {
  const record = recordOf(d, key);
  return fc
    .tuple(
      fc.array(record, { maxLength: 25 }),
      fc.array(fc.tuple(fc.constantFrom('same', 'same', 'same', 'change', 'drop', 'add'), record), { maxLength: 30 }),
    )
    .map(([older, ops]) => {
      const newer: ExportRecord[] = [];
      ops.forEach(([op, r], i) => {
        const o = older[i];
        if (o === undefined || op === 'add') newer.push(r);
        else if (op === 'same') newer.push(o);
        else if (op === 'change')
          newer.push({ ...o, ...Object.fromEntries(Object.entries(r).filter(([c]) => !d.key.includes(c))) });
        if (op === 'add' && o !== undefined) newer.push(o);
      });
      if (unique) {
        const once = (list: ExportRecord[]) =>
          list.filter((r, i) => list.findIndex((x) => d.key.every((k) => x[k] === r[k])) === i);
        return sortedPair(d, once(older), once(newer), sorted);
      }
      return sortedPair(d, older, newer, sorted);
    });
}

function sortedPair(d: ExportDef, older: ExportRecord[], newer: ExportRecord[], sorted: boolean) {
  if (sorted) {
    const columns = d.columns.map((c) => c.name);
    sortRecords(older, d.key, columns);
    sortRecords(newer, d.key, columns);
  }
  return { older, newer };
}

const columnSet = (d: ExportDef) => fc.subarray(d.columns.map((c) => c.name).slice(0, 6)).map((cols) => new Set(cols));

/** Whether the byte path must do without parsing any whole file: no empty record, no key value spanning lines. */
function bytePathApplies(d: ExportDef, records: readonly ExportRecord[]): boolean {
  return records.every(
    (r) =>
      Object.keys(r).length > 0 &&
      d.key.every((k) => typeof r[k] !== 'object' || r[k] === null || Object.keys(r[k] as object).length === 0),
  );
}

describe('the diff of export files from their bytes', () => {
  for (const name of ['users', 'team_memberships', 'sub-admin_managed_objects']) {
    for (const [mode, key, sorted, unique] of [
      ['any key values, in any order', keyValue, false, false],
      ['any key values, sorted by key', keyValue, true, false],
      ['ASCII string keys, sorted by key', asciiKey, true, false],
      ['ASCII string keys, each once, sorted by key (the merge of key bytes)', asciiKey, true, true],
      ['ASCII string keys, each once, in any order', asciiKey, false, true],
    ] as const) {
      it(`${name}, ${mode}: the same diff as the files parsed whole`, () => {
        const d = def(name);
        fc.assert(
          fc.property(
            pairOf(d, key, sorted, unique),
            columnSet(d),
            columnSet(d),
            fc.boolean(),
            ({ older, newer }, nulls, ignored, batched) => {
              const olderText = serializeExport({ records: older });
              // The export's writer: batches joined give the same bytes.
              const newerText = batched
                ? [...serializeBatches([newer.slice(0, 3), [], newer.slice(3)])].join('')
                : serializeExport({ records: newer });
              const { fast, whole, parses } = bothWays(d, olderText, newerText, [older.length, newer.length], {
                nulls,
                ignored,
              });
              expect(fast).toStrictEqual(whole);
              if (bytePathApplies(d, older) && bytePathApplies(d, newer)) expect(parses).toBe(0);
            },
          ),
          { numRuns: 300 },
        );
      });
    }
  }

  it('two nights: the same diff as the files parsed whole, however the newer file is out of order or out of layout', () => {
    fc.assert(
      fc.property(twoNights, ({ d, olderText, newerText, olderCount, newerCount }) => {
        let fast: unknown;
        let whole: unknown;
        try {
          ({ fast, whole } = bothWays(d, olderText, newerText, [olderCount, newerCount]));
        } catch (e) {
          // A file the whole parse refuses is refused the same way.
          expect(() =>
            diffExport(d, parsedSide(olderText, new Set()), parsedSide(newerText, new Set()), undefined),
          ).toThrow((e as Error).message);
          return;
        }
        expect(fast).toStrictEqual(whole);
      }),
      { numRuns: 2000 },
    );
  });

  it('two nights: walkNewer reads the newer file as splitRecords and readKeys would and matches as the merge would, and gives up exactly where the merge cannot be made', () => {
    fc.assert(
      fc.property(twoNights, ({ d, olderText, newerText, olderCount, newerCount }) => {
        const a = Buffer.from(olderText);
        const b = Buffer.from(newerText);
        const ra = splitRecords(a, olderCount)!;
        const ka = readKeys(a, ra, d.key)!;
        const rb = splitRecords(b, newerCount);
        const kb = rb && readKeys(b, rb, d.key);
        // Plain ASCII keys order as their strings do (the parts are joined by NUL).
        const strictlyAscending = (k: RecordKeys, n: number) =>
          Array.from({ length: n }, (_, i) => keyAt(k, i)!).every((key, i, all) => i === 0 || all[i - 1]! < key);
        const mergeable =
          ka.ascii &&
          strictlyAscending(ka, olderCount) &&
          kb !== undefined &&
          kb.ascii &&
          strictlyAscending(kb, newerCount);
        const walk = walkNewer(ka, ra, olderCount, b, newerCount, d.key);
        expect(walk !== undefined).toBe(mergeable);
        if (!walk || !rb || !kb) return;
        expect(walk.ranges).toEqual(rb);
        expect(walk.keys.spans.map((s) => [s.from, s.to, s.head])).toEqual(kb.spans.map((s) => [s.from, s.to, s.head]));
        const match = new Int32Array(newerCount).fill(-1);
        const same = new Uint8Array(newerCount);
        matchRecordKeys(
          ka,
          olderCount,
          kb,
          newerCount,
          (i, j) => {
            match[j] = i;
            same[j] = sameBytes(a, ra, i, b, rb, j) ? 1 : 0;
          },
          () => undefined,
        );
        expect(walk.match).toEqual(match);
        expect(walk.same).toEqual(same);
      }),
      { numRuns: 2000 },
    );
  });

  it('compares the same file with itself without parsing it, and an empty file with any other', () => {
    const d = def('users');
    const records = [{ id: 'b', role: 'x' }, { id: 'a' }, { id: 'b', role: 'y' }];
    const text = serializeExport({ records });
    const same = bothWays(d, text, text, [3, 3]);
    expect(same.fast).toStrictEqual(same.whole);
    expect(same.fast.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 3 });
    expect(same.parses).toBe(0);
    const empty = serializeExport({ records: [] });
    expect(empty).toBe('[]\n');
    for (const [o, n, counts] of [
      [empty, text, [0, 3]],
      [text, empty, [3, 0]],
      [empty, empty, [0, 0]],
    ] as const) {
      const r = bothWays(d, o, n, [...counts]);
      expect(r.fast).toStrictEqual(r.whole);
      expect(r.parses).toBe(0);
    }
  });

  it('parses whole a file not in the serializer layout, or whose count is not the manifest count, and gives the same diff', () => {
    const d = def('users');
    const older = [
      { id: 'a', role: 'x' },
      { id: 'b', role: 'y' },
    ];
    const newer = [{ id: 'a', role: 'z' }, { id: 'c' }];
    const pretty = (r: unknown[]) => serializeExport({ records: r as ExportRecord[] });
    const cases: Array<[string, string, [number, number]]> = [
      // Compact JSON, as another tool would write it.
      [JSON.stringify(older), JSON.stringify(newer), [2, 2]],
      // Four spaces.
      [`${JSON.stringify(older, null, 4)}\n`, pretty(newer), [2, 2]],
      // No trailing newline.
      [pretty(older).trimEnd(), pretty(newer), [2, 2]],
      // The manifest counts one record less or more than the file holds.
      [pretty(older), pretty(newer), [1, 2]],
      [pretty(older), pretty(newer), [2, 3]],
      [pretty([]), pretty(newer), [1, 2]],
      // A name written with an escape: the key line is not found where it is.
      [pretty(older), pretty(newer).replace('"id": "c"', '"\\u0069d": "b"'), [2, 2]],
      // A name twice in one record: JSON.parse keeps the last.
      [pretty(older), pretty(newer).replace('"id": "c"', '"id": "a",\n    "id": "c"'), [2, 2]],
      // Carriage returns.
      [pretty(older).replaceAll('\n', '\r\n'), pretty(newer), [2, 2]],
    ];
    for (const [o, n, counts] of cases) {
      const r = bothWays(d, o, n, counts);
      expect(r.fast).toStrictEqual(r.whole);
      expect(r.fast.older.count).toBe(JSON.parse(o).length);
    }
    // A name twice: the key is the last one's, read from the line (the file is in the layout).
    const twice = bothWays(d, pretty(older), pretty(newer).replace('"id": "c"', '"id": "a",\n    "id": "b"'), [2, 2]);
    expect(twice.fast).toStrictEqual(twice.whole);
    expect(twice.fast.counts).toEqual({ added: 0, removed: 0, changed: 2, unchanged: 0 });
    // Records of the same bytes on both sides are not parsed: their keys are the last of a name written twice.
    const dup = '{\n    "id": "x",\n    "role": "1",\n    "id": "b"\n  }';
    const other = '{\n    "id": "b",\n    "role": "2"\n  }';
    const same = bothWays(d, `[\n  ${dup},\n  ${other}\n]\n`, `[\n  ${other},\n  ${dup}\n]\n`, [2, 2]);
    expect(same.fast).toStrictEqual(same.whole);
    expect(same.fast.counts).toEqual({ added: 0, removed: 0, changed: 2, unchanged: 0 });
    // ... nor is a nested field of the key's name.
    const nested = '{\n    "id": "b",\n    "role": {\n      "id": "x"\n    }\n  }';
    const deep = bothWays(d, `[\n  ${nested},\n  ${other}\n]\n`, `[\n  ${other},\n  ${nested}\n]\n`, [2, 2]);
    expect(deep.fast).toStrictEqual(deep.whole);
    expect(deep.fast.counts).toEqual({ added: 0, removed: 0, changed: 2, unchanged: 0 });
    // A key written with an escape it does not need is the same key.
    const escaped = bothWays(d, pretty(older), pretty(newer).replace('"id": "a"', '"id": "\\u0061"'), [2, 2]);
    expect(escaped.fast).toStrictEqual(escaped.whole);
    expect(escaped.fast.counts).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 0 });
  });
});

describe('matchKeys', () => {
  /** The n-th occurrence of a key in newer goes with the n-th in older: the pairs, by a plain search. */
  function reference(older: readonly string[], newer: readonly string[]) {
    const used = new Set<number>();
    const pairs: Array<[number, number] | [-1, number]> = [];
    newer.forEach((k, j) => {
      const nth = newer.slice(0, j).filter((x) => x === k).length;
      const i = older.map((x, n) => (x === k ? n : -1)).filter((n) => n >= 0)[nth];
      if (i === undefined) pairs.push([-1, j]);
      else {
        used.add(i);
        pairs.push([i, j]);
      }
    });
    return { pairs, removed: older.map((_, i) => i).filter((i) => !used.has(i)) };
  }

  it('pairs the n-th occurrence of a key in newer with the n-th in older, sorted or not', () => {
    // Keys as keyFunction makes them for one export (as many parts each; a part holds no NUL).
    const keys = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'é', '\u0001null', '\u0002""'), { maxLength: 12 });
    fc.assert(
      fc.property(keys, keys, fc.boolean(), fc.boolean(), (older, newer, sortOlder, sortNewer) => {
        if (sortOlder) older.sort();
        if (sortNewer) newer.sort();
        const pairs: Array<[number, number] | [-1, number]> = [];
        const matched = matchKeys(
          older,
          newer,
          (i, j) => pairs.push([i, j]),
          (j) => pairs.push([-1, j]),
        );
        const want = reference(older, newer);
        expect(pairs).toEqual(want.pairs);
        expect(older.map((_, i) => i).filter((i) => matched[i] === 0)).toEqual(want.removed);
      }),
      { numRuns: 3000 },
    );
  });
});

// ---------------------------------------------------------------- through snapshot directories

describe('diffDirectories from the bytes of two snapshots', () => {
  const exp = (cs: { exports: ExportDiff[] }, name: string) => cs.exports.find((e) => e.export === name)!;

  it('gives the change set of the files parsed whole, for every export', async () => {
    const root = tmpDir();
    const users = (n: number, f: (i: number) => ExportRecord) => Array.from({ length: n }, (_, i) => f(i));
    const older = {
      users: users(300, (i) => ({
        id: `u${String(i).padStart(4, '0')}`,
        role: i % 7 === 0 ? 'Admin' : 'User',
        lastLogin: i,
      })),
      team_memberships: users(50, (i) => ({ teamID: `t${i % 5}`, memberID: `u${i}`, perm: 1 })),
      drives: [
        { id: 'd1', name: 'é' },
        { id: 'd1', name: 'twice' },
        { id: 'd\u00e9', name: 'x' },
      ],
    };
    const newer = {
      users: users(300, (i) => ({
        id: `u${String(i + 3).padStart(4, '0')}`,
        role: i % 11 === 0 ? 'Admin' : 'User',
        lastLogin: i + 1,
      })),
      team_memberships: users(50, (i) => ({ teamID: `t${i % 5}`, memberID: `u${i}`, perm: i % 9 === 0 ? 2 : 1 })),
      drives: [
        { id: 'd1', name: 'twice' },
        { id: 'd\u00e9', name: 'y' },
      ],
    };
    for (const set of [older, newer])
      for (const [name, list] of Object.entries(set)) sortRecords(list as ExportRecord[], def(name).key, []);
    const a = writeSnapshot(join(root, 'a'), { records: older, nullFields: [['users', 'email']] });
    const b = writeSnapshot(join(root, 'b'), { records: newer });
    const cs = await diffDirectories(a, b);
    for (const d of EXPORTS) {
      const text = (dir: string, records: ExportRecord[]) =>
        readFileSync(join(dir, exportFileName(d.name, records.length, '2026-11-21')), 'utf8');
      const o = (older as Record<string, ExportRecord[]>)[d.name] ?? [];
      const n = (newer as Record<string, ExportRecord[]>)[d.name] ?? [];
      const nulls = d.name === 'users' ? new Set(['email']) : new Set<string>();
      const ignored = resolveIgnore(undefined, EXPORTS).byExport.get(d.name);
      expect(exp(cs, d.name)).toStrictEqual(
        diffExport(d, parsedSide(text(a, o), nulls), parsedSide(text(b, n), new Set()), ignored),
      );
    }
    expect(exp(cs, 'users').counts).toMatchObject({ added: 3, removed: 3 });
    expect(exp(cs, 'users').counts.changed).toBeGreaterThan(0);
    expect(exp(cs, 'drives').counts).toEqual({ added: 0, removed: 1, changed: 2, unchanged: 0 });
  });

  it('a damaged export file gives the error of the file parsed whole', async () => {
    const root = tmpDir();
    const records = {
      users: [
        { id: 'u1', role: 'x' },
        { id: 'u2', role: 'y' },
      ],
    };
    const ok = writeSnapshot(join(root, 'ok'), { records });
    const bad = writeSnapshot(join(root, 'bad'), { records });
    const name = exportFileName('users', 2, '2026-11-21');
    const text = readFileSync(join(bad, name), 'utf8');
    // Damaged inside a record, the layout kept: the record does not parse. The manifest vouches for it (else its sha256 is what is said).
    const damaged = text.replace('"role": "y"', '"role": y');
    rewriteExport(bad, name, damaged);
    let why = '';
    try {
      JSON.parse(damaged);
    } catch (e) {
      why = describeJsonError(e, damaged);
    }
    await expect(diffDirectories(ok, bad)).rejects.toThrow(
      new FailedError(
        `${exportFileName('users', 2, '2026-11-21')} in ${bad} is not valid JSON (${why}); the snapshot is damaged`,
      ),
    );
    // Cut short.
    rewriteExport(bad, name, text.slice(0, 40));
    await expect(diffDirectories(ok, bad)).rejects.toThrow(
      /users \(11-21-2026\)\.json in .* is not valid JSON \(.*\); the snapshot is damaged$/,
    );
    // An element that is not a record, in the layout's separators.
    rewriteExport(bad, name, text.replace('{\n    "id": "u2",\n    "role": "y"\n  }', '5'));
    await expect(diffDirectories(ok, bad)).rejects.toThrow(/: element 1 is not a record; the snapshot is damaged/);
    rewriteExport(bad, name, '[\n  {\n    "id": "u1"\n  },\n  [\n    1\n  ]\n]\n');
    await expect(diffDirectories(ok, bad)).rejects.toThrow(/: element 1 is not a record; the snapshot is damaged/);
  });
});
