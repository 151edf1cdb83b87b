import { describe, expect, it } from 'vitest';
import { buildAll, sortedJson } from '../../src/exports/build.js';
import { checkExportCatalog, DOCUMENTED_GET_ROUTES, EXPORTS } from '../../src/exports/catalog.js';
import { defineExport, field, unavailable } from '../../src/exports/define.js';
import { backendRelease } from '../../src/exports/build.js';
import type { BuildResult } from '../../src/exports/types.js';
import { CollectionBuilder, brick, drive, image, project, team, usage, user } from './collection-builder.js';

const rows = (r: BuildResult, name: string) => r.exports.find((e) => e.export === name)!.records;
const nulls = (r: BuildResult, name: string) => r.nullFields.filter((n) => n.export === name).map((n) => n.field);

describe('rule 1: documented defaults apply where a field is absent', () => {
  it('writes noBackup as true when absent, keeps a sent value, and nulls a value of the wrong type', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('drives', [
          drive({ id: 'd1' }),
          drive({ id: 'd2', noBackup: false }),
          drive({ id: 'd3', noBackup: true }),
          { ...drive({ id: 'd4' }), noBackup: 'yes' },
        ])
        .build(),
    );
    expect(rows(r, 'drives').map((d) => [d.id, d.noBackup])).toEqual([
      ['d1', true],
      ['d2', false],
      ['d3', true],
      ['d4', null],
    ]);
    expect(r.validation.samples.map((s) => s.path)).toEqual(['noBackup']);
    expect(nulls(r, 'drives')).toEqual([]);
  });

  it('applies the libvirt defaults only to bricks with a libvirt configuration, clockOffset by the brick OS', () => {
    const image = { pool: 'p', volume: 'v' };
    const r = buildAll(
      new CollectionBuilder()
        .with('vms-bricks', [
          brick({ id: 'b1', format: 'windows', libvirt: { image } }),
          brick({ id: 'b2', format: 'linux', libvirt: { image } }),
          brick({ id: 'b3', libvirt: { image, pty: true, nic: 'rtl8139', clockOffset: 'localtime' } }),
          brick({ id: 'b4', format: 'windows', altvirt: { imageID: 'i1' } }),
        ])
        .build(),
    );
    expect(
      rows(r, 'vm_hardware_setups').map((b) => [
        b.id,
        b.libvirt_pty,
        b.libvirt_nic,
        b.libvirt_clockOffset,
        b.libvirt_video,
      ]),
    ).toEqual([
      ['b1', false, 'virtio', 'localtime', null],
      ['b2', false, 'virtio', 'utc', null],
      ['b3', true, 'rtl8139', 'localtime', null],
      ['b4', null, null, null, null],
    ]);
  });

  it('writes version 0 for a base image and keeps limit null (no limit)', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('vms-images', [image({ id: 'i0' }), image({ id: 'i1', version: 3, parent: 'i0', limit: 2 })])
        .build(),
    );
    expect(rows(r, 'vm_images').map((i) => [i.id, i.version, i.parent, i.limit])).toEqual([
      ['i0', 0, null, null],
      ['i1', 3, 'i0', 2],
    ]);
  });

  it('declares each default with the words of the spec, and refuses one of the wrong type', () => {
    const withDefaults = EXPORTS.flatMap((e) => e.columns.filter((c) => c.default).map((c) => `${e.name}.${c.name}`));
    expect(withDefaults).toEqual(
      expect.arrayContaining([
        'drives.noBackup',
        'vm_images.version',
        'vm_hardware_setups.libvirt_pty',
        'vm_hardware_setups.libvirt_nic',
        'vm_hardware_setups.libvirt_clockOffset',
        'teams.usage_vms_cnt',
        'resources_by_project.vms_cnt',
      ]),
    );
    for (const e of EXPORTS)
      for (const c of e.columns) if (c.default) expect(c.default.spec, `${e.name}.${c.name}`).not.toBe('');
    const bad = defineExport({
      name: 'x',
      description: '',
      route: 'drives',
      key: ['id'],
      columns: [field('id'), field('noBackup', { default: { value: 'yes', spec: 'defaults to true' } })],
      omit: {},
    });
    expect(() => checkExportCatalog([bad])).toThrow(/default "yes" is not a value of the field's type/);
  });
});

describe('rule 2: absent usage groups are zero', () => {
  it("gives 0 for a group absent from a team's row and for a team with no row", () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('teams', [team({ id: 'team|a' }), team({ id: 'team|b' }), team({ id: 'team|c' })])
        .with('teams-usage', [usage('team|a', { vms: undefined }), usage('team|b')])
        .build(),
    );
    expect(
      rows(r, 'teams').map((t) => [t.id, t.usage_files_cnt, t.usage_vms_cnt, t.usage_vms_mem, t.usage_drives_used]),
    ).toEqual([
      ['team|a', 1, 0, 0, 15],
      ['team|b', 1, 2, 20, 15],
      ['team|c', 0, 0, 0, 0],
    ]);
    expect(nulls(r, 'teams')).toEqual([]);
  });

  it('gives 0 for a group absent from a project usage row, but null for a group of the wrong type', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('projects-usage', [
          usage('proj|a', { files: undefined, drives: undefined }),
          { ...usage('proj|b'), vms: 'n/a' },
        ])
        .build(),
    );
    expect(rows(r, 'resources_by_project').map((p) => [p.projectID, p.files_cnt, p.drives_used, p.vms_cnt])).toEqual([
      ['proj|a', 0, 0, 2],
      ['proj|b', 1, 15, null],
    ]);
    expect(r.validation.issues).toBe(1);
  });

  it('keeps the usage columns null, and listed, when the usage route was not read', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('teams', [team({ id: 'team|a' })])
        .skip('teams-usage', 'no Team token')
        .build(),
    );
    expect(rows(r, 'teams')[0]).toMatchObject({ usage_files_cnt: null, usage_vms_cnt: null });
    expect(nulls(r, 'teams')).toContain('usage_vms_cnt');
  });
});

describe('rule 3: version gaps come from the release, not from the data', () => {
  it('tells the release from the 3.14.1 routes', () => {
    expect(backendRelease(new CollectionBuilder().build().manifest.routes)).toBe('3.14.1+');
    expect(backendRelease(new CollectionBuilder({ release: '3.13.8' }).build().manifest.routes)).toBe('before 3.14.1');
    const noToken = new CollectionBuilder({ release: '3.13.8' });
    for (const id of [
      'realms',
      'vms-bricks',
      'external-servers',
      'teams-usage',
      'projects-memberships',
      'projects-usage',
      'security-requirements',
      'security-levels',
      'users-certifications',
      'users-managed-objects',
    ]) {
      noToken.skip(id, 'no token', undefined, null);
    }
    expect(backendRelease(noToken.build().manifest.routes)).toBe('unknown');
  });

  it('on 3.14.1, a field no record carries is just null, with no nullFields entry', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('vms-images', [image({ id: 'i1', secureBoot: undefined })])
        .with('drives', [drive({ id: 'd1', sizeOnDisk: undefined, keys: undefined, hasMessage: undefined })])
        .build(),
    );
    expect(rows(r, 'vm_images')[0]!.secureBoot).toBeNull();
    expect(rows(r, 'drives')[0]).toMatchObject({ sizeOnDisk: null, keys: null });
    expect(r.nullFields.filter((n) => n.export !== 'vm_hardware_setups')).toEqual([]);
  });

  it('before 3.14.1, lists the 3.14.1 fields no record carries, and not one some record carries', () => {
    const r = buildAll(
      new CollectionBuilder({ release: '3.13.8' })
        .with('drives', [drive({ id: 'd1' }, '3.13.8'), { ...drive({ id: 'd2' }, '3.13.8'), snapshotPool: 'snap' }])
        .with('vms-images', [image({ id: 'i1', secureBoot: undefined })])
        .build(),
    );
    expect(nulls(r, 'drives')).toEqual(['sizeOnDisk', 'keys', 'hasMessage']);
    expect(nulls(r, 'vm_images')).toEqual(['secureBoot']);
    expect(r.nullFields.find((n) => n.field === 'secureBoot')!.reason).toMatch(
      /this backend predates it \(its 3\.14\.1 routes answer 404\)/,
    );
  });

  it('with the release unknown, lists the fields only when no record carries any 3.14.1 field, and says so', () => {
    const b = new CollectionBuilder({ release: '3.13.8' })
      .with('drives', [drive({ id: 'd1' }, '3.13.8')])
      .with('vms-images', [image({ id: 'i1' })]);
    for (const id of [
      'realms',
      'vms-bricks',
      'external-servers',
      'teams-usage',
      'projects-memberships',
      'projects-usage',
      'security-requirements',
      'security-levels',
      'users-certifications',
      'users-managed-objects',
    ]) {
      b.skip(id, 'no token', undefined, null);
    }
    const r = buildAll(b.build());
    expect(nulls(r, 'drives')).toEqual(['sizeOnDisk', 'keys', 'snapshotPool', 'hasMessage']);
    expect(r.nullFields.find((n) => n.field === 'sizeOnDisk')!.reason).toMatch(/release is unknown/);
    expect(nulls(r, 'vm_images')).toEqual([]);
  });
});

describe('rule 4: nothing silently lost', () => {
  it('exports team and project settings as compact JSON with sorted keys', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('teams', [
          team({ id: 'team|a', settings: { z: 1, a: { y: [2, { d: 1, c: 'é' }], b: null } } }),
          team({ id: 'team|b' }),
        ])
        .with('projects', [project({ id: 'proj|a', settings: { archived: false } })])
        .build(),
    );
    expect(rows(r, 'teams').map((t) => t.settings)).toEqual(['{"a":{"b":null,"y":[2,{"c":"é","d":1}]},"z":1}', '{}']);
    expect(rows(r, 'projects')[0]!.settings).toBe('{"archived":false}');
  });

  it("exports images' driveFormats; their other settings keys are neither columns nor drift", () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('vms-images', [
          image({ id: 'i1', settings: { driveFormats: ['ext4', 'xfs'], color: 'red' } as never }),
          image({ id: 'i2' }),
        ])
        .build(),
    );
    expect(rows(r, 'vm_images').map((i) => i.settings_driveFormats)).toEqual([['ext4', 'xfs'], null]);
    expect(r.drift).toEqual([]);
  });

  it('gives every model field left out of an export a reason, and refuses an open object whose other keys have none', () => {
    for (const e of EXPORTS)
      for (const [path, why] of Object.entries(e.omit)) expect(why, `${e.name}.${path}`).toMatch(/\w/);
    expect(EXPORTS.find((e) => e.name === 'vm_images')!.omit['settings.*']).toMatch(/frontend-only/);
    expect(EXPORTS.find((e) => e.name === 'teams')!.omit).not.toHaveProperty('settings');
    expect(EXPORTS.find((e) => e.name === 'projects')!.omit).not.toHaveProperty('settings');
    const images = EXPORTS.find((e) => e.name === 'vm_images')!;
    const { 'settings.*': _dropped, ...rest } = images.omit;
    expect(() => checkExportCatalog([defineExport({ ...images, omit: rest })])).toThrow(
      /other keys of open object "settings"/,
    );
  });
});

describe('rule 5: proposedRoute names documented GET routes only', () => {
  it('holds for every declared column and every nullFields entry of a 3.13.8 build', () => {
    for (const e of EXPORTS) {
      for (const c of e.columns)
        if (c.source.kind === 'unavailable' && c.source.proposedRoute)
          expect(DOCUMENTED_GET_ROUTES.has(c.source.proposedRoute)).toBe(true);
    }
    const r = buildAll(new CollectionBuilder({ release: '3.13.8' }).build());
    const proposed = [...r.nullFields, ...r.exports].flatMap((x) => (x.proposedRoute ? [x.proposedRoute] : []));
    expect(proposed.length).toBeGreaterThan(0);
    for (const p of proposed) expect(DOCUMENTED_GET_ROUTES.has(p), p).toBe(true);
    expect(DOCUMENTED_GET_ROUTES.has('GET /api/vms/bricks/{id}')).toBe(false);
  });

  it('refuses an undocumented proposed route at catalog load', () => {
    const bad = defineExport({
      name: 'x',
      description: '',
      route: 'drives',
      key: ['id'],
      columns: [field('id'), unavailable('extra', 'not in the list', 'GET /api/drives/{id}')],
      omit: {},
    });
    expect(() => checkExportCatalog([bad])).toThrow(/not a GET route the API documents/);
  });
});

describe('rule 6: readable without joins', () => {
  it('gives user_profiles the first and last name, and vm_images a realmID column', () => {
    const r = buildAll(
      new CollectionBuilder()
        .with('users', [user({ id: 'u1', firstName: 'Zoë', lastName: 'Ng', state: 'Disabled' })])
        .with('vms-images', [image({ id: 'i1' })])
        .build(),
    );
    expect(rows(r, 'user_profiles')[0]).toMatchObject({
      id: 'u1',
      firstName: 'Zoë',
      lastName: 'Ng',
      state: 'Disabled',
    });
    expect(rows(r, 'vm_images')[0]).toMatchObject({ realmID: 'libvirt', id: 'i1' });
    expect(Object.keys(rows(r, 'vm_images')[0]!)).not.toContain('realm');
  });
});

describe('settings as sorted JSON text', () => {
  const viaStringify = (v: unknown) =>
    JSON.stringify(v, (_k, x: unknown) =>
      x !== null && typeof x === 'object' && !Array.isArray(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, (x as Record<string, unknown>)[k]]),
          )
        : x,
    );

  it('is what JSON.stringify writes with sorted keys, for any parsed JSON value', () => {
    const samples = [
      '{}',
      '[]',
      '{"b":[1,{"z":null,"a":"\\u0000é\\"\\\\"}],"a":{},"__proto__":{"x":1}}',
      '{"n":[1e21,-0,0.1,true,false,null,[[]]],"":""}',
      '"x"',
      '3',
    ];
    for (const text of samples) expect(sortedJson(JSON.parse(text)), text).toBe(viaStringify(JSON.parse(text)));
  });

  it('does not overflow the stack on a hostile, deeply nested object', () => {
    let text = '{}';
    for (let i = 0; i < 50_000; i++) text = `{"a":[${text}]}`;
    const out = sortedJson(JSON.parse(text));
    expect(out.length).toBe(text.length);
    expect(out.startsWith('{"a":[{"a":[')).toBe(true);
  });

  it('builds the teams export from a team whose settings nest deeper than the call stack', () => {
    let settings = '{}';
    for (let i = 0; i < 50_000; i++) settings = `{"a":[${settings}]}`;
    const teamText = JSON.stringify(team({ id: 'team|deep' })).replace('"settings":{}', `"settings":${settings}`);
    const r = buildAll(new CollectionBuilder().raw('teams', `[${teamText}]`).build());
    expect((rows(r, 'teams')[0]!.settings as string).length).toBe(settings.length);
  });
});
