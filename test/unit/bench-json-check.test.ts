import { describe, expect, it } from 'vitest';
import { checkJson } from '../../src/body/json-scan.js';
import { createFakeBackend } from '../fake/backend.js';
import { ROUTES } from '../../src/api/catalog.js';
import { randomStream } from '../fake/prng.js';

function parseVerdict(text: string, shape: 'array' | 'object'): number | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (shape === 'array') return Array.isArray(v) ? v.length : undefined;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : undefined;
  } catch {
    return undefined;
  }
}

/** A small deterministic PRNG (test/fake/prng.ts). */
const rng = (seed: number) => randomStream(seed);

const PIECES = [
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '"',
  '\\',
  '\\u00e9',
  '\\x',
  '0',
  '-',
  '1.5',
  '1e9',
  '.',
  'e',
  'true',
  'nul',
  ' ',
  '\n',
  '\t',
  'é',
  '\u0001',
  '\uFEFF',
  '<',
  'a',
  '"k"',
  '00',
  '-0',
  '1E+2',
  '1e',
  '\\"',
];

describe('the collector’s JSON check (no parse)', () => {
  it('vouches for every body the fake backend serves, with the record count', () => {
    const backend = createFakeBackend({
      baseUrl: 'https://127.0.0.1:1',
      realms: [{ id: 'libvirt', driver: 'libvirt' }],
    });
    for (const route of ROUTES) {
      const text = backend.responseBody(route.id, route.perRealm ? 'libvirt' : undefined);
      expect(checkJson(Buffer.from(text, 'utf8'), route.shape), route.id).toBe(parseVerdict(text, route.shape));
      expect(checkJson(Buffer.from(text, 'utf8'), route.shape === 'array' ? 'object' : 'array')).toBeUndefined();
    }
  });

  it('never accepts what JSON.parse rejects (random mutations of JSON texts)', () => {
    const random = rng(42);
    const seeds = [
      '[{"id":"a","n":-1.5e-3,"t":true,"f":false,"z":null,"arr":[1,[2,{}],[]],"o":{"k":"\\u00e9\\n\\"x\\\\"}}, {"id":"b"}]',
      '{"defaultRealm":"libvirt","realms":{"a":{"id":"a","name":"A é","driver":"libvirt"}}}',
      '  [ ]  ',
      '[0, -0, 10, 0.5, 1E5, 1e-5, "\\/\\b\\f\\r\\t"]',
    ];
    let accepted = 0;
    for (let round = 0; round < 20000; round++) {
      let text = seeds[round % seeds.length]!;
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const piece = PIECES[Math.floor(random() * PIECES.length)]!;
        const cut = Math.floor(random() * 3);
        text = text.slice(0, at) + (random() < 0.7 ? piece : '') + text.slice(at + cut);
      }
      for (const shape of ['array', 'object'] as const) {
        const verdict = checkJson(Buffer.from(text, 'utf8'), shape);
        if (verdict !== undefined) {
          accepted++;
          expect(parseVerdict(text, shape), JSON.stringify(text)).toBe(verdict);
        }
      }
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it('says no to HTML, truncated bodies, a byte order mark and stray bytes', () => {
    for (const text of [
      '<!DOCTYPE html><html></html>',
      '[{"a":1}',
      '[{"a":"x',
      '\uFEFF[]',
      '[1]x',
      '[1] [2]',
      '',
      '   ',
      '["\u0000"]',
    ]) {
      expect(checkJson(Buffer.from(text, 'utf8'), 'array'), JSON.stringify(text)).toBeUndefined();
    }
    expect(checkJson(Buffer.from([0x5b, 0x22, 0xff, 0xe2, 0x22, 0x5d]), 'array')).toBe(1);
  });
});
