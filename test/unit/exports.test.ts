import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildAll } from '../../src/exports/build.js';
import { checkExportCatalog, EXPORTS } from '../../src/exports/catalog.js';
import { defineExport, field } from '../../src/exports/define.js';
import { renderExportsMarkdown } from '../../scripts/docs/exports.js';
import { exportFileName, serializeExport } from '../../src/exports/serialize.js';
import type { BuildResult, ExportResult } from '../../src/exports/types.js';
import {
  CollectionBuilder,
  T,
  brick,
  config,
  drive,
  image,
  member,
  project,
  team,
  usage,
  user,
} from './collection-builder.js';
import { readCollection } from '../../src/collect/replay.js';
import { CATALOG } from '../../src/exports/catalog.js';
import { cellOf, sheetColumns } from '../../src/sheets/columns.js';

function exportOf(result: BuildResult, name: string): ExportResult {
  const e = result.exports.find((x) => x.export === name);
  if (!e) throw new Error(`no export ${name}`);
  return e;
}

function col(result: BuildResult, name: string, column: string): unknown[] {
  return exportOf(result, name).records.map((r) => r[column]);
}

/** A small 3.14.1 site, every list given out of order. */
function site(): CollectionBuilder {
  return new CollectionBuilder({ realms: ['libvirt', 'alt'] })
    .with('users', [
      user({
        id: 'u3',
        firstName: 'Zoë',
        role: 'Admin',
        permissions: ['2010', '1001'],
        state: 'Disabled',
        deactivationType: 'Admin',
        department: 'IT',
      }),
      user({ id: 'u1', contactEmail: 'ada@mail.example.net', lastLogin: T + 5, comment: 'line 1\nline 2' }),
      user({ id: 'u2', role: 'SubAdmin' }),
    ])
    .with('teams', [
      team({
        id: 'team|b',
        name: 'Beta',
        quotas: { memory: 2048, cores: 8 },
        teamQuotas: { cores: 64, memory: 4096, storage: { ssd: 100, hdd: 500 }, devices: {} },
        members: [member({ id: 'u2' }), member({ id: 'u1', email: 'u1@example.org', perm: 2 })],
      }),
      team({ id: 'team|a', name: 'Alpha', members: [member({ id: 'u3' })], startDate: T, endDate: T + 100 }),
      team({ id: 'team|c', name: 'Gamma (no usage)' }),
    ])
    .with('teams-usage', [
      usage('team|b', { vms: { cnt: 5, mem: 5000, cores: 10 } }),
      usage('no-team', { files: { cnt: 99, size: 99 } }),
      usage('team|gone', { exists: false }),
      usage('team|a', { files: undefined }),
    ])
    .with('drives', [
      drive({ id: 'd2', state: 'ReadOnly', readers: ['vm1', 'vm2'] }),
      drive({ id: 'd1', writer: 'vm1', team: 'team|a' }),
    ])
    .with('projects', [
      project({ id: 'proj|2', name: 'Two', parent: 'proj|1' }),
      project({ id: 'proj|1', name: 'One', securityLevel: 'slvl|1' }),
    ])
    .with('projects-memberships', [
      { id: 'bTE=', projectID: 'proj|2', userID: 'u1', added: T, modified: T, canManage: false, duplicate: true },
      {
        id: 'bTI=',
        projectID: 'proj|1',
        userID: 'u2',
        added: T,
        modified: T,
        canManage: true,
        duplicate: false,
        expires: T + 9,
      },
      { id: 'bTM=', projectID: 'proj|1', userID: 'u1', added: T, modified: T, canManage: false, duplicate: false },
    ])
    .with('projects-usage', [
      usage('proj|1'),
      usage('no-project', { drives: undefined }),
      usage('proj|deleted', { exists: false }),
      usage('proj|2'),
    ])
    .with('security-requirements', [
      {
        id: 'sreq|1',
        name: 'Cert',
        desc: '',
        type: 'UserCert',
        created: T,
        modified: T,
        data: { type: 'UserCert', expires: true, defaultExpiration: 86_400_000, maxExpiration: 172_800_000 },
      },
    ])
    .with('security-levels', [
      { id: 'slvl|1', name: 'High', desc: '', created: T, modified: T, requirements: ['sreq|1'] },
    ])
    .with('users-certifications', [
      { id: 'c2', requirementID: 'sreq|1', userID: 'u2', created: T, modified: T, modifiedBy: 'u3' },
      { id: 'c1', requirementID: 'sreq|1', userID: 'u1', expires: T + 1, created: T, modified: T, modifiedBy: 'u3' },
    ])
    .with('users-managed-objects', [
      { managerID: 'u3', objectType: 'Team', objectID: 'team|b' },
      { managerID: 'u3', objectType: 'Project', objectID: 'proj|1' },
      { managerID: 'u2', objectType: 'Team', objectID: 'team|a' },
    ])
    .with('vms-images', [image({ id: 'i2' }), image({ id: 'i1', size: 10, version: 2, parent: 'i0' })], 'libvirt')
    .with('vms-images', [image({ id: 'i9', info: { sourceType: 'NDFS', timezone: 'UTC' }, secureBoot: true })], 'alt')
    .with(
      'vms-configs',
      [config({ id: 'c1', brick: 'b1' }), config({ id: 'c2', brick: 'b2' }), config({ id: 'c3', brick: 'b1' })],
      'libvirt',
    )
    .with('vms-configs', [config({ id: 'c4', brick: 'b1' }), config({ id: 'c5', brick: 'unknown-brick' })], 'alt')
    .with('vms-bricks', [
      brick({
        id: 'b3',
        realmID: 'alt',
        altvirt: { imageID: 'i9', devices: { 'nvidia-a100': 2, 'amd-mi50': 1 }, osType: 'linux' },
      }),
      brick({
        id: 'b1',
        libvirt: { image: { pool: 'default', volume: 'v1' }, video: 'spice', devices: { gpu: 1 } },
        whitelist: { teamIDs: ['team|a'], userIDs: [] },
      }),
      brick({ id: 'b2' }),
    ])
    .with('external-servers', [
      {
        id: 'x2',
        server: 'lic2.example.org',
        ports: '27000,27001',
        protocol: 'tcp',
        owner: 'u3',
        created: T,
        active: true,
      },
      {
        id: 'x1',
        server: '10.0.0.5',
        ports: '1055',
        protocol: 'udp',
        owner: 'u3',
        created: T,
        active: false,
        group: 'matlab',
        deactivation: T + 1000,
      },
    ]);
}

const EXPECTED_COLUMNS: Record<string, string[]> = {
  users: ['id', 'firstName', 'lastName', 'email', 'role', 'permissions'],
  teams: [
    'id',
    'name',
    'desc',
    'created',
    'modified',
    'quotas',
    'teamQuotas_cores',
    'teamQuotas_memory',
    'teamQuotas_storage',
    'teamQuotas_devices',
    'perUserQuotas_cores',
    'perUserQuotas_memory',
    'perUserQuotas_storage',
    'perUserQuotas_devices',
    'settings',
    'startDate',
    'endDate',
    'memberCount',
    'usage_files_cnt',
    'usage_files_size',
    'usage_vms_cnt',
    'usage_vms_mem',
    'usage_vms_cores',
    'usage_drives_cnt',
    'usage_drives_size',
    'usage_drives_used',
  ],
  team_memberships: [
    'teamID',
    'teamName',
    'memberID',
    'firstName',
    'lastName',
    'email',
    'lastLogin',
    'joined',
    'modified',
    'perm',
  ],
  drives: [
    'id',
    'name',
    'owner',
    'capacity',
    'format',
    'noBackup',
    'writer',
    'readers',
    'created',
    'changed',
    'attached',
    'writable',
    'poolID',
    'team',
    'project',
    'realmID',
    'diskType',
    'cache',
    'io',
    'state',
    'stateChange',
    'hasSnapshot',
    'sizeOnDisk',
    'keys',
    'snapshotPool',
    'hasMessage',
  ],
  projects: ['id', 'name', 'desc', 'securityLevel', 'parent', 'settings', 'created', 'modified'],
  project_memberships: ['id', 'projectID', 'userID', 'added', 'modified', 'canManage', 'duplicate', 'expires'],
  resources_by_project: [
    'projectID',
    'projectName',
    'exists',
    'files_cnt',
    'files_size',
    'vms_cnt',
    'vms_mem',
    'vms_cores',
    'drives_cnt',
    'drives_size',
    'drives_used',
  ],
  security_requirements: [
    'id',
    'name',
    'desc',
    'type',
    'created',
    'modified',
    'data_type',
    'data_expires',
    'data_defaultExpiration',
    'data_maxExpiration',
  ],
  security_levels: ['id', 'name', 'desc', 'created', 'modified', 'requirements'],
  user_profiles: [
    'id',
    'firstName',
    'lastName',
    'email',
    'contactEmail',
    'department',
    'position',
    'comment',
    'joined',
    'lastLogin',
    'state',
    'stateReason',
    'deactivationType',
    'deactivatedUntil',
    'expiration',
    'passChanged',
    'tosAccepted',
    'neverEscrow',
    'lastEscrow',
  ],
  user_certifications: ['id', 'requirementID', 'userID', 'expires', 'created', 'modified', 'modifiedBy'],
  'sub-admin_managed_objects': ['managerID', 'objectType', 'objectID'],
  vm_images: [
    'realmID',
    'id',
    'name',
    'description',
    'size',
    'imageType',
    'info_pool',
    'info_volume',
    'info_deviceBusType',
    'info_sourceType',
    'info_timezone',
    'created',
    'modified',
    'version',
    'parent',
    'limit',
    'secureBoot',
    'settings_driveFormats',
  ],
  vm_hardware_setups: [
    'id',
    'name',
    'description',
    'setup',
    'vcores',
    'maxMemBytes',
    'realmID',
    'libvirt_image_pool',
    'libvirt_image_volume',
    'libvirt_video',
    'libvirt_pty',
    'libvirt_clockOffset',
    'libvirt_nic',
    'libvirt_devices',
    'libvirt_extraXML',
    'libvirt_headfullGPU',
    'libvirt_deviceBusType',
    'altvirt_imageID',
    'altvirt_timezone',
    'altvirt_devices',
    'altvirt_osType',
    'altvirt_debug',
    'whitelist_teamIDs',
    'whitelist_userIDs',
    'creatorID',
    'externalServers',
    'format',
    'imageID',
    'created',
    'modified',
    'noQuota',
    'params',
    'vmType',
    'debug',
    'vmConfigCount',
    'deviceCount',
  ],
  licensing_servers: ['id', 'server', 'ports', 'protocol', 'owner', 'created', 'active', 'group', 'deactivation'],
};

const EXPECTED_KEYS: Record<string, Array<Record<string, unknown>>> = {
  users: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }],
  teams: [{ id: 'team|a' }, { id: 'team|b' }, { id: 'team|c' }],
  team_memberships: [
    { teamID: 'team|a', memberID: 'u3' },
    { teamID: 'team|b', memberID: 'u1' },
    { teamID: 'team|b', memberID: 'u2' },
  ],
  drives: [{ id: 'd1' }, { id: 'd2' }],
  projects: [{ id: 'proj|1' }, { id: 'proj|2' }],
  project_memberships: [
    { projectID: 'proj|1', userID: 'u1', id: 'bTM=' },
    { projectID: 'proj|1', userID: 'u2', id: 'bTI=' },
    { projectID: 'proj|2', userID: 'u1', id: 'bTE=' },
  ],
  resources_by_project: [
    { projectID: 'no-project' },
    { projectID: 'proj|1' },
    { projectID: 'proj|2' },
    { projectID: 'proj|deleted' },
  ],
  security_requirements: [{ id: 'sreq|1' }],
  security_levels: [{ id: 'slvl|1' }],
  user_profiles: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }],
  user_certifications: [
    { userID: 'u1', requirementID: 'sreq|1', id: 'c1' },
    { userID: 'u2', requirementID: 'sreq|1', id: 'c2' },
  ],
  'sub-admin_managed_objects': [
    { managerID: 'u2', objectType: 'Team', objectID: 'team|a' },
    { managerID: 'u3', objectType: 'Project', objectID: 'proj|1' },
    { managerID: 'u3', objectType: 'Team', objectID: 'team|b' },
  ],
  vm_images: [
    { realmID: 'alt', id: 'i9' },
    { realmID: 'libvirt', id: 'i1' },
    { realmID: 'libvirt', id: 'i2' },
  ],
  vm_hardware_setups: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }],
  licensing_servers: [{ id: 'x1' }, { id: 'x2' }],
};

describe('the export catalog', () => {
  it('declares the 15 exports of the contract, in its order', () => {
    expect(EXPORTS.map((e) => e.name)).toEqual(Object.keys(EXPECTED_COLUMNS));
  });

  it.each(Object.entries(EXPECTED_COLUMNS))('declares the columns of %s in file order', (name, columns) => {
    expect(EXPORTS.find((e) => e.name === name)?.columns.map((c) => c.name)).toEqual(columns);
  });

  it('rejects a duplicate export name at load', () => {
    const users = EXPORTS[0]!;
    expect(() => checkExportCatalog([users, users])).toThrow(/duplicate export users/);
  });

  it('rejects a duplicate column at load', () => {
    const bad = defineExport({
      name: 'x',
      description: '',
      route: 'projects',
      key: ['id'],
      columns: [field('id'), field('name'), field('name')],
      omit: { desc: '', securityLevel: '', parent: '', settings: '', created: '', modified: '' },
    });
    expect(() => checkExportCatalog([bad])).toThrow(/duplicate column name/);
  });

  it('rejects a path the model does not declare, and a model field neither exported nor omitted', () => {
    const typo = defineExport({
      name: 'x',
      description: '',
      route: 'projects',
      key: ['id'],
      columns: [field('id'), field('nmae')],
    });
    expect(() => checkExportCatalog([typo])).toThrow(/no field "nmae"/);
    const forgotten = defineExport({
      name: 'x',
      description: '',
      route: 'security-levels',
      key: ['id'],
      columns: [field('id'), field('name')],
    });
    expect(() => checkExportCatalog([forgotten])).toThrow(
      /field "desc" of security-levels is neither a column nor omitted/,
    );
  });

  it('rejects a nested object written as one column, and a key that is not a scalar column', () => {
    const nested = defineExport({
      name: 'x',
      description: '',
      route: 'security-requirements',
      key: ['id'],
      columns: [field('id'), field('data')],
      omit: { name: '', desc: '', type: '', created: '', modified: '' },
    });
    expect(() => checkExportCatalog([nested])).toThrow(/"data" is object/);
    const arrayKey = defineExport({
      name: 'x',
      description: '',
      route: 'security-levels',
      key: ['requirements'],
      columns: [field('id'), field('requirements')],
      omit: { name: '', desc: '', created: '', modified: '' },
    });
    expect(() => checkExportCatalog([arrayKey])).toThrow(/key column requirements is not a scalar column/);
  });
});

describe('export records', () => {
  const result = buildAll(site().build());

  it('holds all 15 exports in catalog order, all available on a complete 3.14.1 collection', () => {
    expect(result.exports.map((e) => e.export)).toEqual(EXPORTS.map((e) => e.name));
    expect(result.exports.filter((e) => !e.available || e.reason !== undefined)).toEqual([]);
    expect(result.validation).toEqual({ issues: 0, samples: [] });
    expect(result.drift).toEqual([]);
  });

  it.each(Object.entries(EXPECTED_COLUMNS))(
    'gives every record of %s exactly the catalog columns, in order, never undefined or nested',
    (name, columns) => {
      const { records } = exportOf(result, name);
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) {
        expect(Object.keys(r)).toEqual(columns);
        for (const v of Object.values(r)) {
          expect(v).not.toBeUndefined();
          if (Array.isArray(v)) for (const x of v) expect(typeof x === 'object' && x !== null).toBe(false);
          else expect(typeof v === 'object' && v !== null).toBe(false);
        }
      }
    },
  );

  it.each(Object.entries(EXPECTED_KEYS))('sorts %s by its key and counts one row per source record', (name, keys) => {
    const def = EXPORTS.find((e) => e.name === name)!;
    expect(exportOf(result, name).records.map((r) => Object.fromEntries(def.key.map((k) => [k, r[k]])))).toEqual(keys);
  });

  it('sorts strings by code unit, numbers numerically and null first', () => {
    const c = new CollectionBuilder()
      .with(
        'users',
        ['b', 'B', 'a', 'ä', '10', '9', 'Z'].map((id) => user({ id })),
      )
      .with('teams', [
        team({
          id: 't',
          members: [
            member({ id: 'm1', perm: 10 }),
            member({ id: 'm1', perm: 9 }),
            member({ id: 'm1', perm: undefined }),
          ],
        }),
      ])
      .build();
    const r = buildAll(c);
    expect(col(r, 'users', 'id')).toEqual(['10', '9', 'B', 'Z', 'a', 'b', 'ä']);
    // Equal keys (a duplicate member) fall back to every column: null, then 9 before 10.
    expect(col(r, 'team_memberships', 'perm')).toEqual([null, 9, 10]);
  });

  it('keeps timestamps as epoch milliseconds, untouched', () => {
    expect(col(result, 'users', 'id')).toEqual(['u1', 'u2', 'u3']);
    expect(col(result, 'user_profiles', 'lastLogin')).toEqual([T + 5, null, null]);
    expect(col(result, 'user_profiles', 'joined')).toEqual([T, T, T]);
    expect(col(result, 'licensing_servers', 'deactivation')).toEqual([T + 1000, null]);
  });

  it('splits the user record between users (identity, role) and user_profiles (profile, account state)', () => {
    expect(exportOf(result, 'users').records[2]).toEqual({
      id: 'u3',
      firstName: 'Zoë',
      lastName: 'Abe',
      email: 'u3@example.org',
      role: 'Admin',
      permissions: ['2010', '1001'],
    });
    expect(exportOf(result, 'user_profiles').records[0]).toMatchObject({
      id: 'u1',
      email: 'u1@example.org',
      contactEmail: 'ada@mail.example.net',
      comment: 'line 1\nline 2',
      state: 'Active',
      deactivationType: null,
    });
    expect(exportOf(result, 'user_profiles').records[2]).toMatchObject({
      id: 'u3',
      state: 'Disabled',
      deactivationType: 'Admin',
      department: 'IT',
    });
  });

  it('writes open-ended maps as sorted "key=value" strings, an empty map as [] and an absent one as null', () => {
    const teams = exportOf(result, 'teams').records;
    expect(teams[1]).toMatchObject({
      id: 'team|b',
      quotas: ['cores=8', 'memory=2048'],
      teamQuotas_cores: 64,
      teamQuotas_memory: 4096,
      teamQuotas_storage: ['hdd=500', 'ssd=100'],
      teamQuotas_devices: [],
      perUserQuotas_cores: null,
      perUserQuotas_storage: null,
      memberCount: 2,
    });
    const bricks = exportOf(result, 'vm_hardware_setups').records;
    expect(bricks.map((b) => [b.libvirt_devices, b.altvirt_devices])).toEqual([
      [['gpu=1'], null],
      [null, null],
      [null, ['amd-mi50=1', 'nvidia-a100=2']],
    ]);
  });

  it('joins team usage into teams by team id, leaving no-team and deleted teams out', () => {
    const teams = exportOf(result, 'teams').records;
    expect(teams.map((t) => t.id)).toEqual(['team|a', 'team|b', 'team|c']);
    // A group absent from the row means none; so does a team with no usage row at all.
    expect(teams[0]).toMatchObject({
      usage_files_cnt: 0,
      usage_files_size: 0,
      usage_vms_cnt: 2,
      usage_drives_used: 15,
    });
    expect(teams[1]).toMatchObject({
      usage_files_cnt: 1,
      usage_vms_cnt: 5,
      usage_vms_mem: 5000,
      usage_vms_cores: 10,
      usage_drives_size: 30,
    });
    expect(teams[2]).toMatchObject({ usage_files_cnt: 0, usage_vms_cnt: 0, usage_drives_cnt: 0 });
    expect(result.nullFields.filter((n) => n.export === 'teams')).toEqual([]);
  });

  it('lists one team_memberships row per team and member with the team name', () => {
    expect(exportOf(result, 'team_memberships').records[1]).toEqual({
      teamID: 'team|b',
      teamName: 'Beta',
      memberID: 'u1',
      firstName: 'Bo',
      lastName: 'Berg',
      email: 'u1@example.org',
      lastLogin: null,
      joined: T,
      modified: T + 1,
      perm: 2,
    });
  });

  it('keeps every project usage row, no-project and deleted projects included, with project names joined', () => {
    const rows = exportOf(result, 'resources_by_project').records;
    expect(rows.map((r) => [r.projectID, r.projectName, r.exists])).toEqual([
      ['no-project', null, true],
      ['proj|1', 'One', true],
      ['proj|2', 'Two', true],
      ['proj|deleted', null, false],
    ]);
    expect(rows[0]).toMatchObject({ files_cnt: 1, drives_cnt: 0, drives_used: 0 });
  });

  it("counts the VM configs per brick over every realm's configs", () => {
    expect(exportOf(result, 'vm_hardware_setups').records.map((b) => [b.id, b.vmConfigCount])).toEqual([
      ['b1', 3],
      ['b2', 1],
      ['b3', 0],
    ]);
  });

  it('flattens nested brick configuration into named columns', () => {
    expect(exportOf(result, 'vm_hardware_setups').records[0]).toMatchObject({
      libvirt_image_pool: 'default',
      libvirt_image_volume: 'v1',
      libvirt_video: 'spice',
      libvirt_pty: false,
      libvirt_nic: 'virtio',
      libvirt_clockOffset: 'utc',
      whitelist_teamIDs: ['team|a'],
      whitelist_userIDs: [],
      externalServers: null,
      vmType: null,
      deviceCount: null,
    });
  });

  it('reads the images of every realm into vm_images with a realmID column', () => {
    const rows = exportOf(result, 'vm_images').records;
    expect(rows.map((r) => [r.realmID, r.id, r.info_pool, r.info_sourceType, r.info_timezone])).toEqual([
      ['alt', 'i9', null, 'NDFS', 'UTC'],
      ['libvirt', 'i1', 'default', null, null],
      ['libvirt', 'i2', 'default', null, null],
    ]);
    expect(rows[1]).toMatchObject({ size: 10, version: 2, parent: 'i0', limit: null });
  });
});

describe('export files', () => {
  it('serializes an export as a 2-space indented JSON array with a trailing newline', () => {
    expect(serializeExport({ records: [] })).toBe('[]\n');
    expect(serializeExport({ records: [{ id: 'a', tags: ['x'], n: null }] })).toBe(
      '[\n  {\n    "id": "a",\n    "tags": [\n      "x"\n    ],\n    "n": null\n  }\n]\n',
    );
  });

  it('names a file <count>-<export> (<M>-<D>-<YYYY>).json, month and day not zero-padded', () => {
    expect(exportFileName('users', 12, '2026-11-21')).toBe('12-users (11-21-2026).json');
    expect(exportFileName('sub-admin_managed_objects', 0, '2026-01-05')).toBe(
      '0-sub-admin_managed_objects (1-5-2026).json',
    );
    expect(exportFileName('vm_images', 3, '2024-02-29')).toBe('3-vm_images (2-29-2024).json');
  });

  it('names files the same in every process time zone', () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Santiago', 'Asia/Kolkata']) {
        process.env.TZ = tz;
        expect(exportFileName('drives', 1, '2026-01-01')).toBe('1-drives (1-1-2026).json');
        expect(exportFileName('drives', 1, '2026-12-31')).toBe('1-drives (12-31-2026).json');
        expect(exportFileName('drives', 1, '2026-09-06')).toBe('1-drives (9-6-2026).json');
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('rejects a date that is not YYYY-MM-DD', () => {
    expect(() => exportFileName('users', 1, '2026-13-01')).toThrow(/YYYY-MM-DD/);
    expect(() => exportFileName('users', 1, '11/21/2026')).toThrow(/YYYY-MM-DD/);
    expect(() => exportFileName('users', 1, '2026-02-30')).toThrow(/YYYY-MM-DD/);
  });

  it('names every export of a build by its record count', () => {
    const r = buildAll(site().build());
    expect(r.exports.map((e) => exportFileName(e.export, e.records.length, '2026-11-21'))).toContain(
      '3-team_memberships (11-21-2026).json',
    );
  });
});

describe('docs/exports.md', () => {
  const committed = readFileSync(fileURLToPath(new URL('../../docs/exports.md', import.meta.url)), 'utf8');

  it('is current with the catalog (regenerate with node --import tsx scripts/gen-docs.ts)', () => {
    expect(committed).toBe(renderExportsMarkdown());
  });

  it('lists every export with its key, source route and every column with its source', () => {
    for (const exp of EXPORTS) {
      expect(committed).toContain(`## ${exp.name}\n`);
      for (const c of exp.columns) expect(committed).toContain(`| \`${c.name}\` |`);
    }
    expect(committed).toContain(
      '**unavailable**: GET /api/vms/bricks returns a reduced projection without vmType, and no documented GET route returns it',
    );
    expect(committed).not.toContain('GET /api/vms/bricks/{id}');
    expect(committed).toContain('- Key (sort order): `teamID`, `memberID`');
    expect(committed).toMatch(/users and user_profiles/);
    expect(committed).toMatch(/Undocumented enum values/);
    expect(committed).toMatch(/"key=value"/);
  });

  it("says of every map column split in the spreadsheets what its cells hold, as the shipped recordings' sheets write them", async () => {
    const nights = ['platform-3.14.1', 'platform-3.14.1-night2', 'platform-3.14.1-night3'];
    const built = await Promise.all(
      nights.map(async (n) =>
        buildAll(await readCollection(fileURLToPath(new URL(`../../recordings/${n}`, import.meta.url))), ['vms']),
      ),
    );
    const said = (exp: string, column: string) => {
      const section = committed.slice(committed.indexOf(`## ${exp}\n`));
      const row = section.split('\n').find((l) => l.includes(`| \`${column}\` |`))!;
      return /\| one (number|text|number or text) column per key, `[^`]+` \|$/.exec(row)?.[1];
    };
    const checked: string[] = [];
    for (const exp of CATALOG) {
      for (const col of exp.columns) {
        const form = said(exp.name, col.name);
        if (form === undefined) continue;
        checked.push(`${exp.name}.${col.name}`);
        if (form === 'number or text') continue;
        for (const b of built) {
          const records = b.exports.find((e) => e.export === exp.name)!.records;
          for (const c of sheetColumns(exp.name, records).filter((x) => x.column === col.name && x.key !== undefined)) {
            for (const r of records) {
              const cell = cellOf(c, r);
              if (cell !== null)
                expect(typeof cell, `${exp.name} ${c.header}`).toBe(form === 'number' ? 'number' : 'string');
            }
          }
        }
      }
    }
    // Walked from the catalog: the quotas, devices and a running VM's drives are among them.
    expect(checked).toEqual(
      expect.arrayContaining([
        'teams.quotas',
        'teams.teamQuotas_storage',
        'vm_hardware_setups.libvirt_devices',
        'active_vms.drives',
        'active_vms.resources_devices',
      ]),
    );
    expect(said('active_vms', 'drives')).toBe('text');
    expect(said('teams', 'quotas')).toBe('number');
  });
});
