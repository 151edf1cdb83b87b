/**
 * The differential tests of the fast paths (src/fast-paths.ts): each must
 * give what the plain path it stands in for gives. The build runs with every
 * fast path on, each one off, and all off, over the shipped recordings and a
 * fake site with hostile records, and must write the same bytes and say the
 * same things; the body check gives the same verdicts with the scan on and
 * off, and the diff of two nights with the newer file walked and read whole.
 * The switches are passed as test/helpers/fast-paths.ts makes them, so
 * that test/unit/fence.test.ts sees the code read each one both ways. The
 * record check and the JSON scan have their own mutation tests
 * (bench-fast-check.test.ts, bench-json-check.test.ts).
 */
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRoute, planRoutes, REALMS_ROUTE } from '../../src/api/catalog.js';
import { checkBody } from '../../src/body/decode.js';
import { diffExport } from '../../src/diff/compare.js';
import type { LoadedExport } from '../../src/diff/types.js';
import { buildAll } from '../../src/exports/build.js';
import { CATALOG, EXPORTS } from '../../src/exports/catalog.js';
import { orderByUniqueStringKey, sortedIndexes } from '../../src/exports/fast/key-order.js';
import { plainRecordMaker, recordMaker } from '../../src/exports/fast/record-maker.js';
import { sortRecords } from '../../src/exports/order.js';
import { serializeExport } from '../../src/exports/serialize.js';
import type { ExportRecord } from '../../src/exports/types.js';
import { stagedSnapshot, type ReadableManifest } from '../../src/snapshot/dir.js';
import { tmpDir } from '../helpers/run-cli.js';
import { builtOutput, RECORDING_COLLECTIONS, type NamedCollection } from '../helpers/build-output.js';
import { hostileSite, ODD_VALUES } from '../helpers/hostile-site.js';
import { randomStream } from '../fake/prng.js';
import { FAST_PATH_NAMES, fastPaths } from '../helpers/fast-paths.js';
import { twoNights } from '../helpers/two-nights.js';

/** A small deterministic PRNG (test/fake/prng.ts). */
const rng = (seed: number) => randomStream(seed);

const COLLECTIONS: NamedCollection[] = [
  ...RECORDING_COLLECTIONS,
  ['a hostile fake site (seed 1)', () => hostileSite(1)],
  ['a hostile fake site (seed 2)', () => hostileSite(2)],
];

describe.each(COLLECTIONS)('the build over %s', (_name, load) => {
  it('writes the same bytes, validation, drift and nulls with every fast path on, each one off, and all off', async () => {
    const c = await load();
    const expected = builtOutput(c, { fast: fastPaths() });
    for (const off of [...FAST_PATH_NAMES.map((s) => [s]), FAST_PATH_NAMES]) {
      const got = builtOutput(c, { fast: fastPaths(off) });
      expect(got.rest, `off: ${off.join(', ')}`).toBe(expected.rest);
      got.files.forEach((f, i) => expect(f, `${CATALOG[i]!.name} with ${off.join(', ')} off`).toBe(expected.files[i]));
    }
  });
});

describe('the body check (the JSON scan, or JSON.parse)', () => {
  function verdict(route: string, def: Parameters<typeof checkBody>[1], body: Buffer, scan: boolean): string {
    try {
      return JSON.stringify(checkBody(route, def, body, { quote: false, fast: fastPaths(scan ? [] : ['jsonScan']) }));
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
  }

  it.each(COLLECTIONS)(
    'gives the same verdict with the scan on and off for every body of %s, and for every body cut short',
    async (_name, load) => {
      const c = await load();
      const defs = new Map(
        [planRoute(REALMS_ROUTE), ...planRoutes(c.manifest.realms.ids)].map((p) => [p.label, p.def]),
      );
      for (const [label, raw] of c.bodies) {
        const body = raw as Buffer;
        const def = defs.get(label)!;
        for (const b of [
          body,
          body.subarray(0, Math.floor(body.length / 2)),
          Buffer.concat([body, Buffer.from(',')]),
        ]) {
          expect(verdict(label, def, b, false), label).toBe(verdict(label, def, b, true));
        }
      }
    },
  );
});

describe('the diff of two nights (walkNewer, or the newer file split and keyed whole)', () => {
  const side = (text: string, count: number): LoadedExport => {
    const bytes = Buffer.from(text);
    return {
      available: true,
      records: [],
      file: { bytes, count, parse: () => JSON.parse(bytes.toString('utf8')) as ExportRecord[] },
      nullColumns: new Set(),
    };
  };
  const diff = (
    d: Parameters<typeof diffExport>[0],
    older: LoadedExport,
    newer: LoadedExport,
    walk: boolean,
  ): unknown => {
    try {
      return diffExport(d, older, newer, undefined, fastPaths(walk ? [] : ['walkNewer']));
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
  };

  it('is the same with the walk on and off, however the newer file is out of order or out of layout', () => {
    fc.assert(
      fc.property(twoNights, ({ d, olderText, newerText, olderCount, newerCount }) => {
        const on = diff(d, side(olderText, olderCount), side(newerText, newerCount), true);
        expect(diff(d, side(olderText, olderCount), side(newerText, newerCount), false)).toStrictEqual(on);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the hostile site', () => {
  it('exercises what the fast paths fall back on: validation issues, drift and a key sort that is not unique', () => {
    const r = buildAll(hostileSite(1));
    expect(r.validation.issues).toBeGreaterThan(0);
    expect(r.drift.length).toBeGreaterThan(0);
    const declined = r.exports.filter(
      (e, i) =>
        e.records.length > 1 &&
        orderByUniqueStringKey(
          e.records,
          EXPORTS[i]!.key.map((k) => (rec: Record<string, unknown>) => rec[k]),
        ) === undefined,
    );
    expect(declined.length).toBeGreaterThan(0);
  });
});

describe('the unique-string-key sort', () => {
  const PIECES = ['a', 'b', 'ab', '', '\u0000', 'é', '😀', 'A', 'a\u0000', 'z'];
  it('orders as sortRecords does whenever it applies, and declines otherwise', () => {
    const next = rng(7);
    let applied = 0;
    for (let round = 0; round < 400; round++) {
      const width = 1 + Math.floor(next() * 2);
      const key = ['k0', 'k1'].slice(0, width);
      const names = [...key, 'v'];
      // Mostly small sets, and some large enough for the radix sort's partitions (under 12 keys it sorts by insertion).
      const n = round % 8 === 0 ? 12 + Math.floor(next() * 300) : Math.floor(next() * 12);
      const rows = Array.from({ length: n }, (_, i) => {
        // `v` breaks ties in sortRecords, against input order; `i` says which row is which.
        const row: Record<string, unknown> = { v: Math.floor(next() * 5), i };
        for (const k of key) {
          const r = next();
          row[k] =
            r < 0.05
              ? 1
              : r < 0.08
                ? null
                : Array.from({ length: Math.floor(next() * 3) }, () => PIECES[Math.floor(next() * PIECES.length)]).join(
                    '',
                  );
        }
        return row;
      });
      const fast = orderByUniqueStringKey(
        rows,
        key.map((k) => (row: Record<string, unknown>) => row[k]),
      );
      const plain = rows.map((r) => ({ ...r }));
      sortRecords(plain, key, names);
      if (fast === undefined) {
        const tuples = rows.map((r) => JSON.stringify(key.map((k) => r[k])));
        const applies =
          rows.every((r) =>
            key.every((k) => typeof r[k] === 'string' && (width === 1 || !(r[k] as string).includes('\u0000'))),
          ) && new Set(tuples).size === rows.length;
        expect(applies, JSON.stringify(rows)).toBe(false);
      } else {
        applied++;
        expect(fast.map((r) => r.i)).toEqual(plain.map((r) => r.i));
      }
    }
    expect(applied).toBeGreaterThan(50);
  });

  it('puts keys in the order of `<` (UTF-16 code units, a prefix first), equal keys side by side, whatever their prefixes and sizes', () => {
    const next = rng(11);
    const byLess = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(next() * 600);
      // Long shared prefixes, keys that are prefixes of others, surrogate pairs, U+0000 and repeats.
      const prefix = 'team|'.repeat(Math.floor(next() * 3));
      const keys = Array.from(
        { length: n },
        () =>
          prefix +
          Array.from({ length: Math.floor(next() * 6) }, () => PIECES[Math.floor(next() * PIECES.length)]).join(''),
      );
      const order = [...sortedIndexes(keys)];
      expect([...order].sort((a, b) => a - b)).toEqual(keys.map((_, i) => i));
      expect(order.map((i) => keys[i])).toEqual([...keys].sort(byLess));
    }
    // Random UUIDs, as most ids are.
    const uuids = Array.from({ length: 5000 }, () =>
      Array.from({ length: 36 }, (_, j) =>
        [8, 13, 18, 23].includes(j) ? '-' : '0123456789abcdef'[Math.floor(next() * 16)],
      ).join(''),
    );
    expect([...sortedIndexes(uuids)].map((i) => uuids[i])).toEqual([...uuids].sort(byLess));
  });
});

describe('the record maker', () => {
  it('reads the same columns of every record of an export file back with it on and off (Snapshot.records)', async () => {
    const c = await RECORDING_COLLECTIONS[0]![1]();
    const dir = tmpDir();
    for (const e of buildAll(c).exports.filter((x) => x.available && x.records.length > 0)) {
      const file = `${e.export}.json`;
      writeFileSync(join(dir, file), serializeExport(e));
      const entry = { export: e.export, file, count: e.records.length, available: true };
      // Some columns, out of order, and one no record has.
      const columns = [...Object.keys(e.records[0]!).slice(0, 3).reverse(), 'not-a-column'];
      // A staged snapshot reads its files back unchecked: only the entry is needed of its manifest.
      const snapshot = stagedSnapshot(dir, { exports: [entry] } as unknown as ReadableManifest);
      const on = await snapshot.records(entry, columns, fastPaths());
      const off = await snapshot.records(entry, columns, fastPaths(['recordMaker']));
      expect(on.length).toBe(e.records.length);
      expect(JSON.stringify(off), e.export).toBe(JSON.stringify(on));
      expect(Object.keys(on[0]!)).toEqual(columns);
    }
  });

  it('makes for every export the record the plain maker makes: same keys, order, values and JSON', () => {
    const next = rng(3);
    for (const exp of EXPORTS) {
      const names = exp.columns.map((c) => c.name);
      const fast = recordMaker(names);
      const plain = plainRecordMaker(names);
      for (let i = 0; i < 20; i++) {
        const values = names.map(() => ODD_VALUES[Math.floor(next() * ODD_VALUES.length)]);
        const a = fast(values);
        const b = plain(values);
        expect(Object.keys(a)).toEqual(names);
        expect(Object.keys(a)).toEqual(Object.keys(b));
        expect(JSON.stringify(a, null, 2)).toBe(JSON.stringify(b, null, 2));
        expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
      }
    }
  });
});
