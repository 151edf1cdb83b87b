import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCollection } from '../../src/collect/replay.js';
import { buildAll } from '../../src/exports/build.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { compareValues } from '../../src/exports/order.js';
import type { RawCollection } from '../../src/collect/types.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

const dir = (name: string) => join(REPO_ROOT, 'recordings', name);

function body(c: RawCollection, label: string): unknown[] {
  const b = c.bodies.get(label);
  if (!b) throw new Error(`no ${label}`);
  return JSON.parse(b.toString('utf8'));
}

function expectSortedByKey(rows: Record<string, unknown>[], key: readonly string[]) {
  for (let i = 1; i < rows.length; i++) {
    let cmp = 0;
    for (const k of key) {
      cmp = compareValues(rows[i - 1]![k], rows[i]![k]);
      if (cmp !== 0) break;
    }
    expect(cmp, `row ${i} out of order`).toBeLessThanOrEqual(0);
  }
}

describe.each(['platform-3.14.1', 'platform-3.14.1-night2', 'platform-3.14.1-night3', 'platform-3.13.8'])(
  'the shipped recording %s',
  (name) => {
    it('is a valid collection whose files match their sha256', async () => {
      const c = await readCollection(dir(name));
      expect(c.manifest.kind).toBe('collection');
      expect(c.manifest.baseUrl).toBe('https://platform.example.org');
      expect(c.bodies.size).toBe(c.manifest.routes.filter((r) => r.file !== null).length);
    });

    it('holds no token', () => {
      const text = readFileSync(join(dir(name), '_collection-manifest.json'), 'utf8');
      expect(text).not.toMatch(/fake-token/);
    });

    it('builds every export with the catalog columns in order, sorted by key', async () => {
      const c = await readCollection(dir(name));
      const result = buildAll(c);
      expect(result.exports.map((e) => e.export)).toEqual(EXPORTS.map((e) => e.name));
      for (const def of EXPORTS) {
        const e = result.exports.find((x) => x.export === def.name)!;
        for (const row of e.records) expect(Object.keys(row)).toEqual(def.columns.map((col) => col.name));
        expectSortedByKey(e.records, def.key);
        const keys = new Set(e.records.map((r) => JSON.stringify(def.key.map((k) => r[k]))));
        expect(keys.size, `${def.name} keys are unique`).toBe(e.records.length);
      }
      expect(result.validation.issues).toBe(0);
      expect(result.drift).toEqual([]);
    });

    it('counts one row per source record, with the joins filled in', async () => {
      const c = await readCollection(dir(name));
      const result = buildAll(c);
      const rows = (n: string) => result.exports.find((e) => e.export === n)!.records;
      const users = body(c, 'GET /api/users');
      const teams = body(c, 'GET /api/teams') as Array<{ id: string; members: unknown[] }>;
      expect(rows('users')).toHaveLength(users.length);
      expect(rows('user_profiles')).toHaveLength(users.length);
      expect(rows('teams')).toHaveLength(teams.length);
      expect(rows('team_memberships')).toHaveLength(teams.reduce((n, t) => n + t.members.length, 0));
      expect(rows('drives')).toHaveLength(body(c, 'GET /api/drives').length);
      expect(rows('projects')).toHaveLength(body(c, 'GET /api/projects').length);
      const images = c.manifest.realms.ids.reduce((n, r) => n + body(c, `GET /api/vms/images?realm=${r}`).length, 0);
      expect(rows('vm_images')).toHaveLength(images);
      if (name.startsWith('platform-3.14.1')) {
        const usage = body(c, 'GET /api/teams/usage') as Array<{ id: string; vms?: { cnt: number } }>;
        for (const t of rows('teams')) {
          const u = usage.find((x) => x.id === t.id);
          expect(t.usage_vms_cnt).toBe(u?.vms?.cnt ?? 0);
        }
        const projects = body(c, 'GET /api/projects') as Array<{ id: string; name: string }>;
        const resources = rows('resources_by_project');
        expect(resources).toHaveLength(body(c, 'GET /api/projects/usage').length);
        expect(resources.some((r) => r.projectID === 'no-project')).toBe(true);
        for (const r of resources) expect(r.projectName).toBe(projects.find((p) => p.id === r.projectID)?.name ?? null);
        const configs = c.manifest.realms.ids.flatMap(
          (r) => body(c, `GET /api/vms/${r}/configs`) as Array<{ brick: string }>,
        );
        const bricks = rows('vm_hardware_setups');
        expect(bricks).toHaveLength(body(c, 'GET /api/vms/bricks').length);
        for (const b of bricks) expect(b.vmConfigCount).toBe(configs.filter((x) => x.brick === b.id).length);
      }
    });

    it('reports the nulls it must', async () => {
      const result = buildAll(await readCollection(dir(name)));
      const nulls = result.nullFields.map((n) => `${n.export}.${n.field}`);
      if (name.startsWith('platform-3.14.1')) {
        expect(nulls.sort()).toEqual([
          'vm_hardware_setups.deviceCount',
          'vm_hardware_setups.externalServers',
          'vm_hardware_setups.vmType',
        ]);
      } else {
        expect(nulls).toEqual(
          expect.arrayContaining([
            'drives.sizeOnDisk',
            'drives.keys',
            'team_memberships.joined',
            'team_memberships.perm',
            'vm_images.secureBoot',
            'teams.usage_vms_cnt',
          ]),
        );
        expect(result.exports.filter((e) => !e.available)).toHaveLength(8);
      }
      for (const n of result.nullFields) {
        const rows = result.exports.find((e) => e.export === n.export)!.records;
        expect(
          rows.every((r) => r[n.field] === null),
          `${n.export}.${n.field} is null everywhere`,
        ).toBe(true);
      }
    });
  },
);
