/**
 * The parts the build pool hands to its workers (src/exports/build-pool.ts):
 * built one by one and merged, they must be the whole build, byte for byte
 * and word for word, over the recordings, hostile sites and collections with
 * failed, skipped and unparsable routes. The pool itself (worker threads of
 * the bundle) is tested through the binary (test/e2e/snapshot-pool.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/api/catalog.js';
import type { RawCollection } from '../../src/collect/types.js';
import { build, buildParts, type BuildSummary } from '../../src/exports/build.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { CollectionReader, mergeLoadReports } from '../../src/exports/load.js';
import { serializeExport } from '../../src/exports/serialize.js';
import type { ExportRecord, NullField } from '../../src/exports/types.js';
import { builtOutput, RECORDING_COLLECTIONS, type NamedCollection } from '../helpers/build-output.js';
import { hostileSite } from '../helpers/hostile-site.js';
import { CollectionBuilder, drive, image, user } from './collection-builder.js';

/** What builtOutput gives, made part by part as the workers make it, and merged as the pool merges it. */
function builtByParts(c: RawCollection): { files: string[]; rest: string } {
  const files: string[] = new Array(EXPORTS.length);
  const meta: Array<Record<string, unknown>> = new Array(EXPORTS.length);
  const nullFields: NullField[][] = [];
  const summaries: BuildSummary[] = [];
  // Each part reads its own copy of the collection's bodies, as a worker does.
  for (const part of buildParts()) {
    const copy: RawCollection = { manifest: structuredClone(c.manifest), bodies: new Map(c.bodies) };
    const built = build(copy, undefined, part);
    let step = built.next();
    for (; !step.done; step = built.next()) {
      const e = step.value;
      let records: ExportRecord[] = [];
      for (const batch of e.batches(Math.max(1, e.count))) records = batch;
      files[e.index] = serializeExport({ records });
      meta[e.index] = { export: e.export, available: e.available, ...(e.reason !== undefined ? { reason: e.reason } : {}), ...(e.proposedRoute !== undefined ? { proposedRoute: e.proposedRoute } : {}) };
      nullFields[e.index] = e.nullFields;
    }
    summaries.push(step.value);
  }
  const merged = mergeLoadReports(summaries, new CollectionReader(c, false).labels());
  const r = { exports: meta, nullFields: nullFields.flat(), ...merged };
  return { files, rest: JSON.stringify({ ...r, exports: r.exports.map((e) => ({ ...e, records: undefined })) }) };
}

function withProblems(): RawCollection {
  const bad = Array.from({ length: 30 }, (_, i) => ({ ...drive({ id: `d${i}` }), state: i }));
  return new CollectionBuilder({ realms: ['libvirt', 'other'] })
    .with('users', [user({ id: 'u2' }), { ...user({ id: 'u1' }), surprise: 1 }])
    .with('drives', bad)
    .with('vms-images', [image({ id: 'i1', info: { pool: 'p', volume: 'v', deviceBusType: 'nvme' as 'scsi' } })], 'libvirt')
    .fail('vms-images', 'HTTP 503', 'other')
    .skip('teams', 'no token of type team')
    .raw('projects', '<html>login</html>')
    .raw('vms-configs', '{"a":1}', 'libvirt')
    .build();
}

const COLLECTIONS: NamedCollection[] = [
  ...RECORDING_COLLECTIONS,
  ['a hostile fake site (seed 1)', () => hostileSite(1)],
  ['a hostile fake site (seed 3)', () => hostileSite(3)],
  ['a collection with failed, skipped, unparsable and invalid routes', withProblems],
];

describe('the build parts', () => {
  it('hold every export once and every route once, and each export reads only the routes of its part', () => {
    const parts = buildParts();
    expect(parts.flatMap((p) => p.exports).sort((a, b) => a - b)).toEqual(EXPORTS.map((_, i) => i));
    expect(parts.flatMap((p) => p.routes).sort()).toEqual(ROUTES.map((r) => r.id).sort());
    for (const p of parts) {
      for (const i of p.exports) {
        const exp = EXPORTS[i]!;
        const read = [exp.route, ...exp.columns.flatMap((c) => (c.source.kind === 'join' || c.source.kind === 'count' ? [c.source.route] : []))];
        for (const r of read) expect(p.routes, `${exp.name} reads ${r}`).toContain(r);
      }
    }
    // Independent parts, or the pool has nothing to share out.
    expect(parts.length).toBeGreaterThan(8);
  });

  it.each(COLLECTIONS)('built one by one and merged, are the whole build of %s', async (_name, load) => {
    const c = await load();
    const whole = builtOutput(c);
    const parts = builtByParts(c);
    expect(parts.rest).toBe(whole.rest);
    parts.files.forEach((f, i) => expect(f, EXPORTS[i]!.name).toBe(whole.files[i]));
  });

  it('merge validation samples in catalog order, the first 20 of them', () => {
    const sample = (route: string, index: number) => ({ route, index, path: 'state', message: 'bad' });
    const labels = ['GET /api/users', 'GET /api/drives', 'GET /api/teams'];
    const a = { validation: { issues: 25, samples: Array.from({ length: 20 }, (_, i) => sample('GET /api/teams', i)) }, drift: [{ route: 'GET /api/teams', unknownFields: ['x'] }], bodyFailures: [] };
    const b = { validation: { issues: 3, samples: [sample('GET /api/drives', 0), sample('GET /api/users', 7)] }, drift: [{ route: 'GET /api/users', unknownFields: ['y'] }], bodyFailures: [{ route: 'GET /api/drives', detail: 'not JSON' }] };
    const m = mergeLoadReports([a, b], labels);
    expect(m.validation.issues).toBe(28);
    expect(m.validation.samples.map((s) => `${s.route}#${s.index}`).slice(0, 3)).toEqual(['GET /api/users#7', 'GET /api/drives#0', 'GET /api/teams#0']);
    expect(m.validation.samples).toHaveLength(20);
    expect(m.drift.map((d) => d.route)).toEqual(['GET /api/users', 'GET /api/teams']);
    expect(m.bodyFailures).toEqual([{ route: 'GET /api/drives', detail: 'not JSON' }]);
  });
});
