/**
 * src/exports/schema.ts reads the zod models through zod's public API only
 * (`instanceof`, `.shape`, `.options`, `.def`): what it says of an object
 * that keeps undeclared keys decides what drift is reported.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collectDrift, driftTree, isOpenObject } from '../../src/exports/schema.js';

describe('reading the models as data', () => {
  it('knows an object that keeps undeclared keys (looseObject, or a catchall of unknown values) from one that strips or refuses them', () => {
    expect(isOpenObject(z.looseObject({ a: z.string() }))).toBe(true);
    expect(isOpenObject(z.object({ a: z.string() }).catchall(z.unknown()))).toBe(true);
    expect(isOpenObject(z.looseObject({ a: z.string() }).optional().nullable())).toBe(true);
    expect(isOpenObject(z.object({ a: z.string() }))).toBe(false);
    expect(isOpenObject(z.strictObject({ a: z.string() }))).toBe(false);
    expect(isOpenObject(z.object({ a: z.string() }).catchall(z.string()))).toBe(false);
    expect(isOpenObject(z.string())).toBe(false);
  });

  it('reports undeclared keys as drift except inside an open object', () => {
    const model = z.object({ id: z.string(), settings: z.looseObject({ kind: z.string() }).optional() });
    const out = new Set<string>();
    collectDrift(driftTree(model)!, { id: 'x', extra: 1, settings: { kind: 'k', free: true } }, '', out);
    expect([...out]).toEqual(['extra']);
  });
});
