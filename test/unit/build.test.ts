import { describe, expect, it } from 'vitest';
import { build, buildAll } from '../../src/exports/build.js';
import type { MemoryPolicy } from '../../src/exports/memory-policy.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { serializeBatches, serializeExport } from '../../src/exports/serialize.js';
import type { BuildResult, ExportResult, NullField } from '../../src/exports/types.js';
import {
  CollectionBuilder,
  SKIP_3141,
  T,
  brick,
  config,
  drive,
  image,
  member,
  team,
  usage,
  user,
} from './collection-builder.js';

function exportOf(result: BuildResult, name: string): ExportResult {
  const e = result.exports.find((x) => x.export === name);
  if (!e) throw new Error(`no export ${name}`);
  return e;
}

function nulls(result: BuildResult, name: string): NullField[] {
  return result.nullFields.filter((n) => n.export === name);
}

/** A 3.13.8 backend: its records lack every 3.14.1 field, and the 3.14.1 routes answered 404. */
function old(): CollectionBuilder {
  return new CollectionBuilder({ release: '3.13.8' })
    .with('users', [user({ id: 'u1' })])
    .with('teams', [team({ id: 'team|a', members: [member({ id: 'u1' }, '3.13.8'), member({ id: 'u2' }, '3.13.8')] })])
    .with('drives', [drive({ id: 'd1' }, '3.13.8'), drive({ id: 'd2' }, '3.13.8')])
    .with('vms-images', [image({ id: 'i1', secureBoot: undefined })])
    .with('vms-configs', [config({ id: 'c1', brick: 'b1' })]);
}

const SINCE_3141_ROUTES: Record<string, string> = {
  project_memberships: 'GET /api/projects/memberships',
  resources_by_project: 'GET /api/projects/usage',
  security_requirements: 'GET /api/security-requirements',
  security_levels: 'GET /api/security-levels',
  user_certifications: 'GET /api/users/certifications',
  'sub-admin_managed_objects': 'GET /api/users/managed-objects',
  vm_hardware_setups: 'GET /api/vms/bricks',
  licensing_servers: 'GET /api/external-servers',
};

describe('a 3.13.8 collection', () => {
  const result = buildAll(old().build());

  it('still has all 15 exports, in catalog order', () => {
    expect(result.exports.map((e) => e.export)).toEqual(EXPORTS.map((e) => e.name));
  });

  it.each(Object.entries(SINCE_3141_ROUTES))(
    'marks %s unavailable, empty, with the skip reason and the route that would supply it',
    (name, route) => {
      expect(exportOf(result, name)).toEqual({
        export: name,
        records: [],
        available: false,
        reason: `${route} was skipped: ${SKIP_3141}`,
        proposedRoute: route,
      });
    },
  );

  it('keeps the exports of routes every release serves', () => {
    for (const name of ['users', 'teams', 'team_memberships', 'drives', 'projects', 'user_profiles', 'vm_images']) {
      expect(exportOf(result, name)).toMatchObject({ available: true });
      expect(exportOf(result, name).reason).toBeUndefined();
    }
    expect(exportOf(result, 'team_memberships').records).toHaveLength(2);
  });

  it('lists the 3.14.1 fields no record carries in nullFields, saying why', () => {
    expect(nulls(result, 'drives').map((n) => n.field)).toEqual(['sizeOnDisk', 'keys', 'snapshotPool', 'hasMessage']);
    expect(nulls(result, 'team_memberships').map((n) => n.field)).toEqual(['joined', 'modified', 'perm']);
    expect(nulls(result, 'vm_images').map((n) => n.field)).toEqual(['secureBoot']);
    expect(nulls(result, 'drives')[0]).toEqual({
      export: 'drives',
      field: 'sizeOnDisk',
      reason: 'sizeOnDisk was added in backend 3.14.1, and this backend predates it (its 3.14.1 routes answer 404)',
    });
    expect(nulls(result, 'team_memberships')[2]!.reason).toMatch(
      /^members\.perm was added in backend 3\.14\.1, and this backend predates it/,
    );
    expect(exportOf(result, 'drives').records.every((r) => r.sizeOnDisk === null && r.keys === null)).toBe(true);
  });

  it("lists the teams' usage columns in nullFields because GET /api/teams/usage was skipped", () => {
    const usageNulls = nulls(result, 'teams');
    expect(usageNulls.map((n) => n.field)).toEqual([
      'usage_files_cnt',
      'usage_files_size',
      'usage_vms_cnt',
      'usage_vms_mem',
      'usage_vms_cores',
      'usage_drives_cnt',
      'usage_drives_size',
      'usage_drives_used',
    ]);
    expect(usageNulls[0]).toEqual({
      export: 'teams',
      field: 'usage_files_cnt',
      reason: `GET /api/teams/usage was skipped: ${SKIP_3141}`,
      proposedRoute: 'GET /api/teams/usage',
    });
    expect(exportOf(result, 'teams').records[0]).toMatchObject({
      id: 'team|a',
      memberCount: 2,
      usage_files_cnt: null,
      usage_drives_used: null,
    });
  });

  it('lists nothing for unavailable exports, and nothing for fields every release sends', () => {
    expect(nulls(result, 'vm_hardware_setups')).toEqual([]);
    expect(
      result.nullFields
        .map((n) => n.export)
        .filter((e) => !['teams', 'team_memberships', 'drives', 'vm_images'].includes(e)),
    ).toEqual([]);
  });
});

describe('nullFields on a 3.14.1 collection', () => {
  it('lists the columns of bricks that GET /api/vms/bricks cannot supply, with reasons and no undocumented proposed route', () => {
    const r = buildAll(new CollectionBuilder().with('vms-bricks', [brick({ id: 'b1' })]).build());
    expect(nulls(r, 'vm_hardware_setups')).toEqual([
      {
        export: 'vm_hardware_setups',
        field: 'externalServers',
        reason: expect.stringMatching(
          /^GET \/api\/vms\/bricks returns a reduced projection without externalServers, and no documented GET route returns it/,
        ),
      },
      {
        export: 'vm_hardware_setups',
        field: 'vmType',
        reason: expect.stringMatching(
          /^GET \/api\/vms\/bricks returns a reduced projection without vmType, and no documented GET route returns it/,
        ),
      },
      {
        export: 'vm_hardware_setups',
        field: 'deviceCount',
        reason:
          'the field that backs the device count of a brick is not shown in the spec (management-api.md section 4, rule 6)',
      },
    ]);
    expect(r.nullFields.filter((n) => n.export !== 'vm_hardware_setups')).toEqual([]);
  });

  it('does not list a field that is merely absent from some records, or an optional 3.14.1 field absent from all', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('drives', [drive({ id: 'd1', sizeOnDisk: undefined }), drive({ id: 'd2' })])
        .with('vms-images', [image({ id: 'i1', secureBoot: undefined }), image({ id: 'i2', secureBoot: true })])
        .build(),
    );
    expect(r.nullFields.filter((n) => n.export !== 'vm_hardware_setups')).toEqual([]);
    expect(exportOf(r, 'drives').records.map((d) => [d.sizeOnDisk, d.snapshotPool])).toEqual([
      [null, null],
      [512, null],
    ]);
  });
});

describe('validation', () => {
  it('exports a field of the wrong type as null, counts it, and samples it without its value', () => {
    const c = new CollectionBuilder()
      .with('drives', [
        drive({ id: 'd1' }),
        { ...drive({ id: 'd2' }), capacity: 'SECRET-VALUE-42', created: '2024-01-01' },
      ])
      .build();
    const r = buildAll(c);
    expect(exportOf(r, 'drives').records[1]).toMatchObject({
      id: 'd2',
      capacity: null,
      created: null,
      name: 'drive d2',
      state: 'Ready',
    });
    expect(exportOf(r, 'drives').records[0]).toMatchObject({ id: 'd1', capacity: 1024, created: T });
    expect(r.validation.issues).toBe(2);
    expect(r.validation.samples).toEqual([
      {
        route: 'GET /api/drives',
        index: 1,
        path: 'capacity',
        message: expect.stringMatching(/expected number, received string/),
      },
      { route: 'GET /api/drives', index: 1, path: 'created', message: expect.any(String) },
    ]);
    const text = JSON.stringify(r.validation);
    expect(text).not.toContain('SECRET-VALUE-42');
    expect(text).not.toContain('2024-01-01');
    for (const s of r.validation.samples) expect(Object.keys(s)).toEqual(['route', 'index', 'path', 'message']);
  });

  it('nulls an array or map column when an issue lies inside it, and nothing else', () => {
    const c = new CollectionBuilder()
      .with('drives', [{ ...drive({ id: 'd1' }), readers: ['vm1', 7] }])
      .with('teams', [
        {
          ...team({
            id: 'team|a',
            members: [member({ id: 'u1' }), { ...member({ id: 'u2' }), perm: 'admin' } as never],
          }),
          teamQuotas: { cores: 4, storage: { ssd: 'lots', hdd: 10 } },
        },
      ])
      .build();
    const r = buildAll(c);
    expect(exportOf(r, 'drives').records[0]).toMatchObject({ id: 'd1', readers: null, name: 'drive d1' });
    expect(exportOf(r, 'teams').records[0]).toMatchObject({
      teamQuotas_cores: 4,
      teamQuotas_storage: null,
      memberCount: 2,
    });
    expect(exportOf(r, 'team_memberships').records.map((m) => [m.memberID, m.perm, m.joined])).toEqual([
      ['u1', 1, T],
      ['u2', null, T],
    ]);
    expect(r.validation.samples.map((s) => `${s.route} ${s.index} ${s.path}`)).toEqual([
      'GET /api/teams 0 teamQuotas.storage.ssd',
      'GET /api/teams 0 members.1.perm',
      'GET /api/drives 0 readers.1',
    ]);
  });

  it('keeps an undocumented enum value and counts it', () => {
    const r = buildAll(
      new CollectionBuilder().with('drives', [drive({ id: 'd1', state: 'Archived' as 'Ready' })]).build(),
    );
    expect(exportOf(r, 'drives').records[0]!.state).toBe('Archived');
    expect(r.validation.issues).toBe(1);
    expect(r.validation.samples[0]).toMatchObject({ route: 'GET /api/drives', index: 0, path: 'state' });
    expect(r.validation.samples[0]!.message).not.toContain('Archived');
  });

  it('keeps the other fields of a union when one of them holds a new enum value', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('vms-images', [image({ id: 'i1', info: { pool: 'p', volume: 'v', deviceBusType: 'nvme' as 'scsi' } })])
        .build(),
    );
    expect(exportOf(r, 'vm_images').records[0]).toMatchObject({
      info_pool: 'p',
      info_volume: 'v',
      info_deviceBusType: 'nvme',
    });
    expect(r.validation.samples).toEqual([
      {
        route: 'GET /api/vms/images?realm=libvirt',
        index: 0,
        path: 'info.deviceBusType',
        message: expect.stringMatching(/scsi/),
      },
    ]);
  });

  it('nulls an enum field whose value is not a string', () => {
    const r = buildAll(new CollectionBuilder().with('drives', [{ ...drive({ id: 'd1' }), state: 3 }]).build());
    expect(exportOf(r, 'drives').records[0]!.state).toBeNull();
    expect(r.validation.issues).toBe(1);
  });

  it('counts every issue but keeps 20 samples', () => {
    const bad = Array.from({ length: 30 }, (_, i) => ({
      ...drive({ id: `d${String(i).padStart(2, '0')}` }),
      capacity: 'x',
    }));
    const r = buildAll(new CollectionBuilder().with('drives', bad).build());
    expect(r.validation.issues).toBe(30);
    expect(r.validation.samples).toHaveLength(20);
    expect(r.validation.samples.map((s) => s.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('validates the records of routes no export reads, and a list with an element that is not an object fails its route', () => {
    const c = new CollectionBuilder()
      .with('vms-active', [{ id: 'vm1' }])
      .with('users', [user({ id: 'u1' }), null])
      .build();
    const r = buildAll(c);
    expect(r.validation.samples.some((s) => s.route === 'GET /api/vms/libvirt/active')).toBe(true);
    const users = exportOf(r, 'users');
    expect(users.available).toBe(false);
    expect(users.records).toEqual([]);
    expect(users.reason).toMatch(/GET \/api\/users failed: expected a JSON array of objects but element 1 is null/);
  });
});

describe('drift', () => {
  it('lists, per route, the sorted names of fields the models do not know, nested ones as dotted paths', () => {
    const c = new CollectionBuilder({ realms: ['libvirt', 'alt'] })
      .with('drives', [
        { ...drive({ id: 'd1' }), tier: 'gold' },
        { ...drive({ id: 'd2' }), encrypted: true, tier: 'silver' },
      ])
      .with('teams', [
        {
          ...team({ id: 'team|a', members: [{ ...member({ id: 'u1' }), role: 'x' } as never] }),
          teamQuotas: { cores: 1, gpus: 2 },
        },
      ])
      .with(
        'vms-images',
        [{ ...image({ id: 'i1' }), info: { pool: 'p', volume: 'v', deviceBusType: 'virtio', cacheMode: 'none' } }],
        'alt',
      )
      .raw(
        'realms',
        JSON.stringify({
          defaultRealm: 'libvirt',
          realms: { libvirt: { id: 'libvirt', name: 'L', driver: 'libvirt', zone: 'a' } },
          version: 2,
        }),
      )
      .build();
    const r = buildAll(c);
    expect(r.drift).toEqual([
      { route: 'GET /api/realms', unknownFields: ['realms.*.zone', 'version'] },
      { route: 'GET /api/teams', unknownFields: ['members.role', 'teamQuotas.gpus'] },
      { route: 'GET /api/drives', unknownFields: ['encrypted', 'tier'] },
      { route: 'GET /api/vms/images?realm=alt', unknownFields: ['info.cacheMode'] },
    ]);
    expect(Object.keys(exportOf(r, 'drives').records[0]!)).not.toContain('tier');
    expect(r.validation.issues).toBe(0);
  });
});

describe('routes that are missing', () => {
  it('makes an export unavailable when its route failed (--allow-partial), with the error as reason', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('users', [user({ id: 'u1' })])
        .fail('drives', 'HTTP 503')
        .build(),
    );
    expect(exportOf(r, 'drives')).toEqual({
      export: 'drives',
      records: [],
      available: false,
      reason: 'GET /api/drives failed: HTTP 503',
    });
    expect(exportOf(r, 'users').available).toBe(true);
    expect(r.nullFields.filter((n) => n.export === 'drives')).toEqual([]);
  });

  it('makes the exports of a type without a token unavailable', () => {
    const reason = 'no token for type User: set SVC_TOKEN_USER or --token-user (or SVC_TOKEN for every type)';
    const r = buildAll(new CollectionBuilder().skip('users', reason, undefined, null).build());
    for (const name of ['users', 'user_profiles']) {
      expect(exportOf(r, name)).toEqual({
        export: name,
        records: [],
        available: false,
        reason: `GET /api/users was skipped: ${reason}`,
        proposedRoute: 'GET /api/users',
      });
    }
  });

  it('makes an export unavailable when its body is not JSON of the expected shape', () => {
    const r = buildAll(new CollectionBuilder().raw('projects', '<html>login</html>').raw('drives', '{"a":1}').build());
    expect(exportOf(r, 'projects')).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^GET \/api\/projects failed: expected JSON but received .*HTML/),
    });
    expect(exportOf(r, 'drives')).toMatchObject({
      available: false,
      reason: 'GET /api/drives failed: expected a JSON array but received a JSON object',
    });
  });

  it('nulls and lists derived columns whose route failed', () => {
    const r = buildAll(
      new CollectionBuilder({ realms: ['libvirt', 'alt'] })
        .with('teams', [team({ id: 'team|a' })])
        .fail('teams-usage', 'HTTP 500')
        .with('vms-bricks', [brick({ id: 'b1' })])
        .with('vms-configs', [config({ id: 'c1', brick: 'b1' })], 'libvirt')
        .fail('vms-configs', 'timed out after 30 s', 'alt', null)
        .build(),
    );
    expect(nulls(r, 'teams')).toHaveLength(8);
    expect(nulls(r, 'teams')[0]).toEqual({
      export: 'teams',
      field: 'usage_files_cnt',
      reason: 'GET /api/teams/usage failed: HTTP 500',
    });
    expect(nulls(r, 'vm_hardware_setups').find((n) => n.field === 'vmConfigCount')).toEqual({
      export: 'vm_hardware_setups',
      field: 'vmConfigCount',
      reason: 'GET /api/vms/alt/configs failed: timed out after 30 s',
    });
    expect(exportOf(r, 'vm_hardware_setups').records[0]!.vmConfigCount).toBeNull();
  });

  it('publishes a per-realm export with the realms that answered and says which did not', () => {
    const r = buildAll(
      new CollectionBuilder({ realms: ['libvirt', 'alt'] })
        .with('vms-images', [image({ id: 'i1' })], 'libvirt')
        .fail('vms-images', 'HTTP 502', 'alt')
        .build(),
    );
    expect(exportOf(r, 'vm_images')).toMatchObject({
      available: true,
      reason: 'incomplete: GET /api/vms/images?realm=alt failed: HTTP 502',
    });
    expect(exportOf(r, 'vm_images').records.map((i) => [i.realmID, i.id])).toEqual([['libvirt', 'i1']]);
  });

  it('makes the per-realm exports and derivations unavailable when the realm list could not be read', () => {
    const c = new CollectionBuilder({ realms: [] })
      .fail('realms', 'the realms response does not have the documented shape (realms: Invalid input)', undefined, 200)
      .with('vms-bricks', [brick({ id: 'b1' })])
      .build();
    const r = buildAll(c);
    const reason =
      'the realms are unknown: GET /api/realms failed: the realms response does not have the documented shape (realms: Invalid input)';
    expect(exportOf(r, 'vm_images')).toEqual({ export: 'vm_images', records: [], available: false, reason });
    expect(nulls(r, 'vm_hardware_setups').find((n) => n.field === 'vmConfigCount')).toEqual({
      export: 'vm_hardware_setups',
      field: 'vmConfigCount',
      reason,
    });
  });

  it('treats an empty realm list from GET /api/realms as no images at all', () => {
    const r = buildAll(new CollectionBuilder({ realms: [] }).with('vms-bricks', [brick({ id: 'b1' })]).build());
    expect(exportOf(r, 'vm_images')).toEqual({ export: 'vm_images', records: [], available: true });
    expect(exportOf(r, 'vm_hardware_setups').records[0]!.vmConfigCount).toBe(0);
  });

  it('finds per-realm bodies by planning the route, whatever the realm id', () => {
    const hostile = ['../etc', 'a b|c', '__proto__'];
    const b = new CollectionBuilder({ realms: hostile });
    hostile.forEach((realm, i) => b.with('vms-images', [image({ id: `i${i}` })], realm));
    const r = buildAll(b.build());
    expect(exportOf(r, 'vm_images').records.map((x) => [x.realmID, x.id])).toEqual([
      ['../etc', 'i0'],
      ['__proto__', 'i2'],
      ['a b|c', 'i1'],
    ]);
  });
});

describe('build', () => {
  function full(): CollectionBuilder {
    return new CollectionBuilder({ realms: ['libvirt', 'alt'] })
      .with('users', [user({ id: 'u2' }), user({ id: 'u1', lastLogin: T })])
      .with('teams', [team({ id: 'team|a', members: [member({ id: 'u1' })], quotas: { b: 1, a: 2 } })])
      .with('teams-usage', [usage('team|a'), usage('no-team')])
      .with('drives', [{ ...drive({ id: 'd1' }), capacity: 'bad', extra: 1 }])
      .with('vms-images', [image({ id: 'i1' })], 'alt')
      .with('vms-configs', [config({ id: 'c1', brick: 'b1' })], 'alt')
      .with('vms-bricks', [brick({ id: 'b1' })]);
  }

  it('modifies neither the collection nor its bodies with the default memory policy, and gives the same exports each time', () => {
    const c = full().build();
    const bodies = [...c.bodies].map(([k, v]) => [k, v.toString('base64')]);
    const manifest = JSON.stringify(c.manifest);
    const r = buildAll(c);
    exportOf(r, 'teams').records.length = 0;
    expect([...c.bodies].map(([k, v]) => [k, v.toString('base64')])).toEqual(bodies);
    expect(JSON.stringify(c.manifest)).toBe(manifest);
    expect(JSON.stringify(buildAll(c))).not.toBe(JSON.stringify(r));
    expect(JSON.stringify(buildAll(c))).toBe(JSON.stringify(buildAll(c)));
  });

  it('with a consuming memory policy, deletes every body it read, reports each release before the last export (nothing is parsed after it), and builds the same bytes', () => {
    const c = full().build();
    const expected = buildAll(c);
    const releases: number[] = [];
    const policy: MemoryPolicy = {
      consumeBodies: true,
      afterRelease: (bytes) => releases.push(bytes),
      beforeSheetRead: () => {},
      beforeFindingsRead: () => {},
    };
    const gen = build(c, policy);
    const texts: string[] = new Array(15);
    let step = gen.next();
    for (; !step.done; step = gen.next()) {
      const e = step.value;
      texts[e.index] = [...serializeBatches(e.batches(1))].join('');
    }
    expect(texts).toEqual(expected.exports.map(serializeExport));
    expect(JSON.stringify(step.value)).toBe(JSON.stringify({ ...expected, exports: undefined }));
    expect(c.bodies.size).toBe(0);
    expect(releases.length).toBeGreaterThan(0);
    // The routes only the last export reads are released after it: not reported, since nothing is parsed after them.
    const reported = releases.reduce((a, b) => a + b, 0);
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThan(c.manifest.routes.reduce((a, r) => a + (r.bytes ?? 0), 0));
  });

  it('joins and counts on a large site', () => {
    const n = 20_000;
    const ids = Array.from({ length: n }, (_, i) => `id-${String(n - i).padStart(6, '0')}`);
    const c = new CollectionBuilder()
      .with(
        'teams',
        ids.map((id) => team({ id })),
      )
      .with(
        'teams-usage',
        ids.map((id) => usage(id)),
      )
      .with(
        'projects',
        ids.map((id) => ({ id, name: id, desc: '', settings: {}, created: T, modified: T })),
      )
      .with(
        'projects-usage',
        ids.map((id) => usage(id)),
      )
      .with(
        'vms-bricks',
        ids.map((id) => brick({ id })),
      )
      .with(
        'vms-configs',
        ids.map((id, i) => config({ id: `c${i}`, brick: id })),
      )
      .build();
    // Its speed is measured by the benchmark, not asserted here.
    const r = buildAll(c);
    expect(exportOf(r, 'teams').records[0]).toMatchObject({ id: 'id-000001', usage_vms_cnt: 2 });
    expect(exportOf(r, 'resources_by_project').records[n - 1]).toMatchObject({
      projectID: `id-${n}`.replace('id-', 'id-0'),
      projectName: `id-0${n}`,
    });
    expect(exportOf(r, 'vm_hardware_setups').records.every((b) => b.vmConfigCount === 1)).toBe(true);
  });
});
