/**
 * LiveParts (src/exports/build-pool.ts): during a live run on workers, each
 * build part is handed to the pool once every route it reads is in, its
 * bodies spooled to disk; what the pool gets must be every part once, each
 * with all its bodies (byte for byte) and its routes' records. A plan it
 * cannot follow leaves every body in the collection for `finish`.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BodyFile, type Body } from '../../src/collect/body-file.js';
import type { CollectionManifest } from '../../src/collect/manifest.js';
import { buildParts, type BuildPart } from '../../src/exports/build.js';
import { LiveParts } from '../../src/exports/build-pool.js';
import { tmpDir } from '../helpers/run-cli.js';
import { CollectionBuilder, drive, user } from './collection-builder.js';

interface Submitted {
  part: BuildPart;
  manifest: CollectionManifest;
  bodies: ReadonlyMap<string, Body>;
}

function stubPool() {
  const submitted: Submitted[] = [];
  let closed = false;
  const pool = {
    submit: (part: BuildPart, manifest: CollectionManifest, bodies: ReadonlyMap<string, Body>) => void submitted.push({ part, manifest, bodies }),
    close: () => void (closed = true),
    abort: (err: Error) => {
      throw err;
    },
  };
  return { pool, submitted, isClosed: () => closed };
}

function site(realms: string[]) {
  return new CollectionBuilder({ realms: [...new Set(realms)] })
    .with('users', [user({ id: 'u1' }), user({ id: 'u2' })])
    .with('drives', [drive({ id: 'd1' })])
    .fail('teams', 'HTTP 503')
    .skip('projects-usage', 'no token of type Project')
    .build();
}

/** Feeds the routes as collect does: the realms route first, then the others in a scrambled order. */
function feed(parts: LiveParts, manifest: CollectionManifest, bodies: ReadonlyMap<string, Body>): Map<string, boolean> {
  const [realms, ...rest] = manifest.routes;
  const taken = new Map<string, boolean>();
  for (const r of [realms!, ...rest.reverse()]) taken.set(r.route, parts.onRoute(r, bodies.get(r.route) as Buffer | undefined, manifest.realms));
  return taken;
}

describe('the parts of a live run on workers', () => {
  it('are each handed over once, with every body spooled byte for byte and the records of their own routes', async () => {
    const c = site(['libvirt', 'altvirt']);
    const original = new Map(c.bodies);
    const dir = tmpDir();
    const { pool, submitted, isClosed } = stubPool();
    const parts = new LiveParts(pool, { dir, write: (name, bytes) => writeFile(join(dir, name), bytes) });
    const taken = feed(parts, c.manifest, c.bodies);
    for (const [label, body] of original) {
      expect(taken.get(label), label).toBe(true);
      c.bodies.delete(label);
    }
    await parts.finish(c);
    expect(isClosed()).toBe(true);
    expect(submitted.map((s) => s.part.routes.join()).sort()).toEqual(buildParts().map((p) => p.routes.join()).sort());
    const seen = new Set<string>();
    for (const s of submitted) {
      for (const [label, body] of s.bodies) {
        expect(body).toBeInstanceOf(BodyFile);
        expect(readFileSync((body as BodyFile).path).equals(original.get(label) as Buffer), label).toBe(true);
        seen.add(label);
      }
      const labels = s.manifest.routes.map((r) => r.route);
      expect(labels[0]).toBe('GET /api/realms');
      // A part's bodies are of routes whose records it was given.
      for (const label of s.bodies.keys()) expect(labels, s.part.routes.join()).toContain(label);
      expect(s.manifest.realms).toEqual(c.manifest.realms);
    }
    expect([...seen].sort()).toEqual([...original.keys()].sort());
    // Every route's record went to exactly one part (the realms route's to all).
    const records = submitted.flatMap((s) => s.manifest.routes.slice(1).map((r) => r.route));
    expect(records.sort()).toEqual(c.manifest.routes.slice(1).map((r) => r.route).sort());
  });

  it('with a realm listed twice, takes no body and hands every part over from the whole collection at the end', async () => {
    const c = site(['libvirt']);
    const manifest = { ...c.manifest, realms: { ...c.manifest.realms, ids: ['libvirt', 'libvirt'] } };
    const { pool, submitted } = stubPool();
    const parts = new LiveParts(pool, { dir: tmpDir(), write: () => Promise.reject(new Error('nothing is spooled')) });
    const taken = feed(parts, manifest, c.bodies);
    expect([...taken.values()].every((t) => !t)).toBe(true);
    expect(submitted).toEqual([]);
    const bodies = new Map(c.bodies);
    await parts.finish(c);
    expect(submitted).toHaveLength(buildParts().length);
    expect(new Map(submitted.flatMap((s) => [...s.bodies]))).toEqual(bodies);
  });
});
