import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/api/catalog.js';
import { compileFastCheck } from '../../src/exports/fast/record-check.js';
import { collectDrift, driftTree } from '../../src/exports/schema.js';
import { createFakeBackend } from '../fake/backend.js';

const REALMS = [
  { id: 'libvirt', driver: 'libvirt' as const },
  { id: 'altvirt', driver: 'altvirt' as const },
];

function recordsOf(release: '3.14.1' | '3.13.8', seed: number) {
  const backend = createFakeBackend({ baseUrl: 'https://127.0.0.1:1', release, seed, realms: REALMS });
  const out: Array<{ route: (typeof ROUTES)[number]; records: unknown[] }> = [];
  for (const route of ROUTES) {
    if (release === '3.13.8' && route.since !== null) continue;
    for (const realm of route.perRealm ? REALMS.map((r) => r.id) : [undefined]) {
      const body: unknown = JSON.parse(backend.responseBody(route.id, realm));
      out.push({ route, records: route.shape === 'array' ? (body as unknown[]) : [body] });
    }
  }
  return out;
}

/** Every (parent, key) inside a JSON value, depth first. */
function slots(value: unknown, out: Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push({ parent: value, key: i });
      slots(v, out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push({ parent: value as Record<string, unknown>, key: k });
      slots(v, out);
    }
  }
  return out;
}

const REPLACEMENTS: unknown[] = [null, 'x', '', 1.5, -1, 2 ** 60, true, {}, [], [1], { a: 1 }, ['a']];

function mutants(record: unknown): unknown[] {
  const out: unknown[] = [];
  const count = slots(record).length;
  for (let i = 0; i < count; i++) {
    for (const r of [...REPLACEMENTS, undefined]) {
      const copy = structuredClone(record);
      const { parent, key } = slots(copy)[i]!;
      if (r === undefined) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key as string];
      } else {
        (parent as Record<string | number, unknown>)[key] = r;
      }
      out.push(copy);
    }
  }
  for (const r of [...REPLACEMENTS, 'a string', 7]) out.push(r);
  return out;
}

describe('the compiled record check (a fast path before zod)', () => {
  it('passes every record the fake backend serves, with the same drift as the interpreted walk', () => {
    for (const release of ['3.14.1', '3.13.8'] as const) {
      for (const { route, records } of recordsOf(release, 1)) {
        const fast = compileFastCheck(route.item);
        const tree = driftTree(route.item)!;
        for (const rec of records) {
          const withExtra = { ...(rec as object), surpriseField: 1 };
          for (const value of [rec, withExtra]) {
            expect(route.item.safeParse(value).success).toBe(true);
            const seen = new Set<string>();
            expect(fast(value, seen), `${route.id} ${release}`).toBe(true);
            const expected = new Set<string>();
            collectDrift(tree, value, '', expected);
            expect([...seen].sort()).toEqual([...expected].sort());
          }
        }
      }
    }
  });

  it('never passes a record zod rejects, and walks the same drift when it passes', () => {
    for (const { route, records } of recordsOf('3.14.1', 2)) {
      const fast = compileFastCheck(route.item);
      const tree = driftTree(route.item)!;
      for (const rec of records.slice(0, 3)) {
        for (const m of mutants(rec)) {
          const seen = new Set<string>();
          const passed = fast(m, seen);
          const zod = route.item.safeParse(m).success;
          if (passed) {
            expect(zod, `${route.id}: ${JSON.stringify(m).slice(0, 300)}`).toBe(true);
            const expected = new Set<string>();
            collectDrift(tree, m, '', expected);
            expect([...seen].sort()).toEqual([...expected].sort());
          }
        }
      }
    }
  });
});
