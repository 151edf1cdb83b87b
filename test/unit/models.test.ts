import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as m from '../../src/api/models.js';

const T = 1_700_000_000_000;

function drive314(): m.DriveInfo {
  return {
    id: 'd1',
    name: 'scratch',
    owner: 'u1',
    capacity: 10_737_418_240,
    format: 'ext4',
    noBackup: true,
    settings: { color: 'blue' },
    writer: 'vm1',
    readers: ['vm2'],
    created: T,
    changed: T + 1,
    attached: T + 2,
    writable: true,
    poolID: 'pool-a',
    team: 'team|0b4a3f1e-0000-4000-8000-000000000001',
    project: 'proj|0b4a3f1e-0000-4000-8000-000000000002',
    realmID: 'libvirt',
    diskType: 'qcow2',
    cache: 'none',
    io: 'native',
    state: 'ReadWrite',
    stateChange: T + 3,
    hasSnapshot: false,
    sizeOnDisk: 20_000_000_000,
    keys: 2,
    snapshotPool: 'snap-a',
    hasMessage: false,
  };
}

function drive3138(): Record<string, unknown> {
  const { sizeOnDisk, keys, snapshotPool, hasMessage, ...rest } = drive314();
  void sizeOnDisk;
  void keys;
  void snapshotPool;
  void hasMessage;
  return rest;
}

function team314(): m.TeamInfo {
  return {
    id: 'team|0b4a3f1e-0000-4000-8000-000000000001',
    name: 'Analytics',
    desc: 'The analytics team',
    created: T,
    modified: T + 10,
    quotas: { cores: 64 },
    teamQuotas: { cores: 64, memory: 274_877_906_944, storage: { ssd: 1e12 }, devices: { gpu: 2 } },
    perUserQuotas: { cores: 8, storage: {}, devices: {} },
    settings: {},
    startDate: T,
    endDate: T + 86_400_000,
    members: [
      {
        id: 'u1',
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.org',
        lastLogin: T,
        joined: T,
        modified: T,
        perm: 1,
      },
      { id: 'u-gone', firstName: '', lastName: '' },
    ],
  };
}

function image(): m.ImageInfo {
  return {
    id: 'img1',
    name: 'Ubuntu 24.04',
    description: 'base image',
    size: 21_474_836_480,
    imageType: 'linux',
    info: { pool: 'default', volume: 'ubuntu.qcow2', deviceBusType: 'virtio' },
    created: T,
    modified: T,
    limit: 10,
    settings: { driveFormats: ['ext4', 'xfs'] },
    secureBoot: true,
  };
}

function brick(): m.BrickInfo {
  return {
    id: 'b1',
    name: 'GPU worker',
    description: '**big**',
    setup: 'run it',
    vcores: 16,
    maxMemBytes: 68_719_476_736,
    realmID: 'libvirt',
    libvirt: {
      image: { pool: 'default', volume: 'ubuntu.qcow2' },
      video: 'spice',
      pty: false,
      clockOffset: 'utc',
      nic: 'rtl8139',
      devices: { gpu: 1 },
      extraXML: '<x/>',
      headfullGPU: 'nvidia',
      deviceBusType: 'scsi',
    },
    whitelist: { teamIDs: ['team|0b4a3f1e-0000-4000-8000-000000000001'], userIDs: [] },
    creatorID: 'u1',
    externalServers: ['es1'],
    format: 'linux',
    imageID: 'img1',
    created: T,
    modified: T,
    noQuota: false,
    params: '',
    settings: '{}',
    vmType: 'Worker',
    debug: false,
  };
}

function virtualMachine(): m.VirtualMachine {
  return {
    id: 'vm1',
    name: 'analysis',
    owner: 'u1',
    brick: 'b1',
    active: true,
    pubkey: { modulus: 'c0ffee', publicExponent: '010001' },
    drives: { vdb: 'd1' },
    ip: '10.0.0.5',
    protocolVer: 3,
    authedUsers: ['u2'],
    managers: ['u2'],
    realmID: 'libvirt',
    resources: { vms: 1, vcpus: 16, memory: 68_719_476_736, devices: { gpu: 1 } },
    ownerType: 'User',
    vpn: { host: '10.0.0.5', port: 1194 },
    ssh: { host: '10.0.0.5', port: 22 },
    services: { jupyter: { port: 8888 } },
    lastPing: T,
    start: T,
    config: 'cfg1',
    vmcInfo: [{ timestamp: T, info: { load: 0.5 } }],
    systemInfo: { kernel: '6.8' },
  };
}

function vmConfig(): m.VMConfigInfo {
  return {
    id: 'cfg1',
    vmID: 'vm1',
    state: 'Running',
    owners: ['u1'],
    name: 'analysis',
    description: '',
    brick: 'b1',
    rwDrives: ['d1'],
    roDrives: [],
    driveSlots: { d1: 1 },
    macOptions: [],
    lastPing: T,
    lastLaunched: T,
    services: {},
  };
}

function user(): m.UserInfo {
  return {
    id: 'u1',
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.org',
    joined: T,
    role: 'Admin',
    permissions: ['p1', 'p2'],
    state: 'Deactivated',
    deactivationType: 'FailedPassword',
    deactivatedUntil: T + 1000,
  };
}

/** Path of the first issue of a failed parse. */
function firstIssuePath(schema: z.ZodType, value: unknown): PropertyKey[] | undefined {
  const r = schema.safeParse(value);
  return r.success ? undefined : r.error.issues[0]?.path;
}

describe('API models', () => {
  it('parses a full valid record of each of several resources', () => {
    expect(m.DriveInfo.parse(drive314())).toEqual(drive314());
    expect(m.TeamInfo.parse(team314())).toEqual(team314());
    expect(m.ImageInfo.parse(image())).toEqual(image());
    expect(m.BrickInfo.parse(brick())).toEqual(brick());
    expect(m.VirtualMachine.parse(virtualMachine())).toEqual(virtualMachine());
    expect(m.VMConfigInfo.parse(vmConfig())).toEqual(vmConfig());
    expect(m.UserInfo.parse(user())).toEqual(user());
    const realms = {
      defaultRealm: 'libvirt',
      realms: { libvirt: { id: 'libvirt', name: 'Default', driver: 'libvirt' } },
    };
    expect(m.RealmsResponse.parse(realms)).toEqual(realms);
    const usage = {
      id: 'no-team',
      exists: true,
      files: { cnt: 3, size: 10 },
      vms: { cnt: 1, mem: 2, cores: 4 },
      drives: { cnt: 2, size: 100, used: 150 },
    };
    expect(m.UsageInfo.parse(usage)).toEqual(usage);
    expect(m.ProjectUsageInfo.parse({ ...usage, id: 'no-project' })).toEqual({ ...usage, id: 'no-project' });
    const token = {
      id: 't1',
      tokenTypes: ['User', 'Team'],
      tokenType: 'User',
      created: T,
      expires: T + 1,
      owner: 'u1',
      readOnly: true,
    };
    expect(m.APITokenInfo.parse(token)).toEqual(token);
  });

  it('accepts an image whose info is the alternative realm driver variant', () => {
    const alt = { ...image(), info: { sourceType: 'VolumeGroup', timezone: 'UTC' } };
    expect(m.ImageInfo.parse(alt).info).toEqual({ sourceType: 'VolumeGroup', timezone: 'UTC' });
  });

  it('tolerates an unknown extra field', () => {
    const r = m.DriveInfo.safeParse({ ...drive314(), futureField: 42 });
    expect(r.success).toBe(true);
    const t = m.TeamInfo.safeParse({ ...team314(), members: [{ ...team314().members[0], extra: 'x' }] });
    expect(t.success).toBe(true);
  });

  it('rejects a wrong-type field with an issue path naming that field', () => {
    expect(firstIssuePath(m.DriveInfo, { ...drive314(), capacity: '10 GB' })).toEqual(['capacity']);
    expect(firstIssuePath(m.TeamInfo, { ...team314(), members: [{ id: 'u1', firstName: 1, lastName: '' }] })).toEqual([
      'members',
      0,
      'firstName',
    ]);
    expect(firstIssuePath(m.VirtualMachine, { ...virtualMachine(), drives: { vdb: 7 } })).toEqual(['drives', 'vdb']);
  });

  it('rejects a timestamp that is not an integer', () => {
    expect(firstIssuePath(m.DriveInfo, { ...drive314(), created: 1.5 })).toEqual(['created']);
  });

  it('rejects an undocumented enum value', () => {
    expect(firstIssuePath(m.DriveInfo, { ...drive314(), state: 'Broken' })).toEqual(['state']);
    expect(firstIssuePath(m.VMConfigInfo, { ...vmConfig(), state: 'Paused' })).toEqual(['state']);
    expect(firstIssuePath(m.BrickInfo, { ...brick(), vmType: 'Gaming' })).toEqual(['vmType']);
    expect(firstIssuePath(m.UserInfo, { ...user(), deactivationType: 'Banned' })).toEqual(['deactivationType']);
    expect(m.TokenType.safeParse('Admin').success).toBe(false);
    expect(m.ManagedObjectInfo.safeParse({ managerID: 'u1', objectType: 'Drive', objectID: 'd1' }).success).toBe(false);
  });

  it('parses a 3.13.8-style record without the 3.14.1 fields', () => {
    expect(m.DriveInfo.safeParse(drive3138()).success).toBe(true);
    const team = team314();
    const oldTeam = { ...team, members: [{ id: 'u1', firstName: 'Ada', lastName: 'Lovelace' }] };
    expect(m.TeamInfo.safeParse(oldTeam).success).toBe(true);
    const { secureBoot, ...oldImage } = image();
    void secureBoot;
    expect(m.ImageInfo.safeParse(oldImage).success).toBe(true);
    const { debug, ...oldBrick } = brick();
    void debug;
    expect(m.BrickInfo.safeParse(oldBrick).success).toBe(true);
    const oldToken = { id: 't1', tokenType: 'Drive', created: T, expires: T + 1, owner: 'u1', readOnly: false };
    expect(m.APITokenInfo.safeParse(oldToken).success).toBe(true);
  });

  it('lists in SINCE_3_14_1 only fields that exist in the model and are optional', () => {
    const models = m as unknown as Record<string, z.ZodObject | undefined>;
    for (const [name, fields] of Object.entries(m.SINCE_3_14_1)) {
      const schema = models[name];
      expect(schema, name).toBeInstanceOf(z.ZodObject);
      for (const field of fields) {
        const fieldSchema = schema!.shape[field] as z.ZodType | undefined;
        expect(fieldSchema, `${name}.${field}`).toBeDefined();
        expect(fieldSchema!.safeParse(undefined).success, `${name}.${field} optional`).toBe(true);
      }
    }
    expect(m.SINCE_3_14_1['DriveInfo']).toEqual(['sizeOnDisk', 'keys', 'snapshotPool', 'hasMessage']);
  });

  it('gives BrickInfoListed no vmType or externalServers keys in its shape', () => {
    const keys = Object.keys(m.BrickInfoListed.shape);
    expect(keys).not.toContain('vmType');
    expect(keys).not.toContain('externalServers');
    expect(keys).toContain('debug');
    const { vmType, externalServers, ...listed } = brick();
    void vmType;
    void externalServers;
    expect(m.BrickInfoListed.parse(listed)).toEqual(listed);
  });

  it('accepts usage rows whose resource groups are absent', () => {
    expect(m.UsageInfo.safeParse({ id: 'team|x', exists: false }).success).toBe(true);
    expect(Object.keys(m.ProjectUsageInfo.shape)).toEqual(Object.keys(m.UsageInfo.shape));
  });

  it('accepts a VM config that was never launched', () => {
    const { lastPing, lastLaunched, vmID, ...neverLaunched } = vmConfig();
    void lastPing;
    void lastLaunched;
    void vmID;
    expect(m.VMConfigInfo.safeParse({ ...neverLaunched, state: 'Stopped' }).success).toBe(true);
  });
});
