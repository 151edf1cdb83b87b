/**
 * The differential tests of the build's fast paths (src/exports/fast/): each
 * must give what the plain path it stands in for gives. The unique-string-key
 * sort orders as sortRecords does wherever it applies, and the record maker
 * makes the records the plain maker makes; a hostile fake site exercises what
 * they fall back on. The record check has its own mutation test
 * (bench-fast-check.test.ts), and the diff's walk of the newer file its own
 * (diff-bytes.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAll } from '../../src/exports/build.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { orderByUniqueStringKey, sortedIndexes } from '../../src/exports/fast/key-order.js';
import { plainRecordMaker, recordMaker } from '../../src/exports/fast/record-maker.js';
import { sortRecords } from '../../src/exports/order.js';
import { serializeExport } from '../../src/exports/serialize.js';
import { stagedSnapshot } from '../../src/snapshot/dir.js';
import type { ReadableManifest } from '../../src/manifests.js';
import { tmpDir } from '../helpers/run-cli.js';
import { RECORDING_COLLECTIONS } from '../helpers/build-output.js';
import { hostileSite, ODD_VALUES } from '../helpers/hostile-site.js';
import { randomStream } from '../fake/prng.js';

/** A small deterministic PRNG (test/fake/prng.ts). */
const rng = (seed: number) => randomStream(seed);

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
  it('reads back the columns of every record of an export file as the plain maker makes them (Snapshot.records)', async () => {
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
      const got = await snapshot.records(entry, columns);
      const plain = plainRecordMaker(columns);
      const expected = e.records.map((r) => plain(columns.map((k) => r[k] ?? null)));
      expect(got.length).toBe(e.records.length);
      expect(JSON.stringify(got), e.export).toBe(JSON.stringify(expected));
      expect(Object.keys(got[0]!)).toEqual(columns);
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
