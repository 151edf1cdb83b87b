/**
 * A fake site's collection with hostile records: odd values in random
 * fields, unknown fields, repeated and odd ids, a realm id holding U+0000,
 * `__proto__` keys. The differential build tests run over it.
 */
import { ROUTES } from '../../src/api/catalog.js';
import type { RawCollection } from '../../src/collect/types.js';
import { createFakeBackend } from '../fake/backend.js';
import { randomStream } from '../fake/prng.js';
import { CollectionBuilder } from '../unit/collection-builder.js';

/** A small deterministic PRNG (test/fake/prng.ts). */
const rng = (seed: number) => randomStream(seed);

export const ODD_VALUES: unknown[] = [
  null,
  3,
  -0.5,
  'x',
  '',
  '\u0000',
  'é',
  true,
  [],
  [1, 'a'],
  {},
  { a: { b: 1 } },
  1e21,
];

/**
 * Every list route of the small fake site with two realms (libvirt, and
 * `second` with the altvirt driver), each body the text `bodyOf` makes of the
 * route's records as the fake serves them.
 */
export function fakeSiteCollection(
  seed: number,
  second: string,
  bodyOf: (routeId: string, records: Array<Record<string, unknown>>) => string,
): RawCollection {
  const realms = [
    { id: 'libvirt', driver: 'libvirt' as const },
    { id: second, driver: 'altvirt' as const },
  ];
  const backend = createFakeBackend({ baseUrl: 'https://127.0.0.1:1', release: '3.14.1', seed, realms });
  const b = new CollectionBuilder({ realms: realms.map((r) => r.id) });
  for (const route of ROUTES) {
    if (route.id === 'realms') continue;
    for (const realm of route.perRealm ? realms.map((r) => r.id) : [undefined]) {
      const body: unknown = JSON.parse(backend.responseBody(route.id, realm));
      if (Array.isArray(body)) b.raw(route.id, bodyOf(route.id, body as Array<Record<string, unknown>>), realm);
    }
  }
  return b.build();
}

/** Every record of the fake site, with some fields replaced by odd values, unknown fields added, ids repeated or made odd. */
export function hostileSite(seed: number): RawCollection {
  const next = rng(seed);
  return fakeSiteCollection(seed, 'alt\u0000virt', (_route, body) => {
    const records = body.slice(0, 40);
    for (const [i, rec] of records.entries()) {
      const keys = Object.keys(rec);
      const r = next();
      if (r < 0.15) rec[keys[Math.floor(next() * keys.length)]!] = ODD_VALUES[Math.floor(next() * ODD_VALUES.length)];
      else if (r < 0.2) rec[`unknown${i % 3}`] = i;
      else if (r < 0.25 && i > 0) rec.id = records[i - 1]!.id;
      else if (r < 0.28) rec.id = i;
      else if (r < 0.3 && typeof rec.id === 'string') rec.id = `${rec.id}\u0000${i}`;
    }
    let text = JSON.stringify(records);
    if (next() < 0.3) text = text.replace('{', '{"__proto__":{"polluted":1},');
    return text;
  });
}
