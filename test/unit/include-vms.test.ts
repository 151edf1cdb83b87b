import { describe, expect, it } from 'vitest';
import { buildAll } from '../../src/exports/build.js';
import { CATALOG, EXPORTS, exportsFor } from '../../src/exports/catalog.js';
import { serializeExport } from '../../src/exports/serialize.js';
import { snapshotFiles } from '../helpers/snapshot-dir.js';
import { parseInclude } from '../../src/config/values.js';
import { UsageError } from '../../src/errors.js';
import { cellOf, MAX_KEY_COLUMNS, sheetColumns } from '../../src/sheets/columns.js';
import type { BuildResult, ExportResult } from '../../src/exports/types.js';
import { CollectionBuilder, SKIP_3141, config } from './collection-builder.js';

function exportOf(result: BuildResult, name: string): ExportResult {
  const e = result.exports.find((x) => x.export === name);
  if (!e) throw new Error(`no export ${name}`);
  return e;
}

const VM_EXPORTS = ['vm_configs', 'active_vms', 'realms'];

function vm(id: string, realm: string, o: Record<string, unknown> = {}) {
  return {
    id,
    name: `vm ${id}`,
    owner: 'u1',
    brick: 'b1',
    active: true,
    drives: { vdb: 'd2', vda: 'd1' },
    ip: '10.0.0.1',
    protocolVer: 3,
    authedUsers: ['u2'],
    managers: [],
    realmID: realm,
    services: {},
    vmcInfo: [{ timestamp: 1, info: { cpu: 0.5 } }],
    ...o,
  };
}

function twoRealms(): CollectionBuilder {
  return new CollectionBuilder({ realms: ['libvirt', 'altvirt'] })
    .with(
      'vms-configs',
      [config({ id: 'c1', brick: 'b1', owners: ['u1', 'u2'] }), config({ id: 'c2', brick: 'b1' })],
      'libvirt',
    )
    .with('vms-configs', [config({ id: 'c1', brick: 'b2', settings: { z: 1, a: { y: 2, b: 3 } } })], 'altvirt')
    .with('vms-active', [vm('v1', 'libvirt')], 'libvirt')
    .with(
      'vms-active',
      [vm('v2', 'altvirt', { pubkey: { modulus: 'ab', publicExponent: '10001' }, vpn: { host: 'h', port: 1 } })],
      'altvirt',
    );
}

describe('the export catalog with --include', () => {
  it('keeps the 15 as EXPORTS and declares the VM group after them', () => {
    expect(EXPORTS).toHaveLength(15);
    expect(exportsFor([]).map((e) => e.name)).toEqual(EXPORTS.map((e) => e.name));
    expect(exportsFor(['vms']).map((e) => e.name)).toEqual([...EXPORTS.map((e) => e.name), ...VM_EXPORTS]);
    expect(CATALOG.filter((e) => e.include === 'vms').map((e) => e.name)).toEqual(VM_EXPORTS);
    expect(CATALOG.find((e) => e.name === 'vm_configs')!.key).toEqual(['realmID', 'id']);
    expect(CATALOG.find((e) => e.name === 'active_vms')!.key).toEqual(['realmID', 'id']);
    expect(CATALOG.find((e) => e.name === 'realms')!.key).toEqual(['id']);
  });

  it('parses --include: known groups once each, anything else a usage error naming the valid ones', () => {
    expect(parseInclude('vms', '--include')).toEqual(['vms']);
    expect(parseInclude(' VMS ,vms', '--include')).toEqual(['vms']);
    expect(() => parseInclude('vms,disks', '--include')).toThrow(UsageError);
    expect(() => parseInclude('', '--include')).toThrow(/list of vms; "" is not one of them/);
  });
});

describe('a build with --include vms', () => {
  const plain = buildAll(twoRealms().build());
  const result = buildAll(twoRealms().build(), ['vms']);

  it('writes the 15 exactly as without it, then the three', () => {
    expect(plain.exports.map((e) => e.export)).toEqual(EXPORTS.map((e) => e.name));
    expect(result.exports.map((e) => e.export)).toEqual([...EXPORTS.map((e) => e.name), ...VM_EXPORTS]);
    plain.exports.forEach((e, i) => expect(serializeExport(result.exports[i]!)).toBe(serializeExport(e)));
    expect(result.nullFields.filter((n) => !VM_EXPORTS.includes(n.export))).toEqual(plain.nullFields);
    const c = twoRealms().build();
    expect(snapshotFiles(c, plain, 'replay', false, true).manifest).not.toHaveProperty('include');
    expect(snapshotFiles(c, result, 'replay', false, true, ['vms']).manifest.include).toEqual(['vms']);
  });

  it('keys configs by realm and id: an id repeated across realms is two rows', () => {
    const rows = exportOf(result, 'vm_configs').records;
    expect(rows.map((r) => [r.realmID, r.id])).toEqual([
      ['altvirt', 'c1'],
      ['libvirt', 'c1'],
      ['libvirt', 'c2'],
    ]);
    expect(rows[0]!.settings).toBe('{"a":{"b":3,"y":2},"z":1}');
    expect(rows[1]!.owners).toEqual(['u1', 'u2']);
  });

  it('writes running VMs with maps as sorted entries, nested objects as columns, vmcInfo and realmID left out', () => {
    const rows = exportOf(result, 'active_vms').records;
    expect(rows.map((r) => [r.realmID, r.id])).toEqual([
      ['altvirt', 'v2'],
      ['libvirt', 'v1'],
    ]);
    expect(rows[1]!.drives).toEqual(['vda=d1', 'vdb=d2']);
    expect(rows[0]).toMatchObject({
      pubkey_modulus: 'ab',
      pubkey_publicExponent: '10001',
      vpn_host: 'h',
      vpn_port: 1,
      ssh_host: null,
    });
    expect(Object.keys(rows[0]!)).not.toContain('vmcInfo');
    expect(Object.keys(rows[0]!).filter((k) => k === 'realmID')).toHaveLength(1);
  });

  it('writes the realms of GET /api/realms, one per map value, with isDefault', () => {
    expect(exportOf(result, 'realms').records).toEqual([
      { id: 'altvirt', name: 'ALTVIRT', driver: 'libvirt', isDefault: false },
      { id: 'libvirt', name: 'LIBVIRT', driver: 'libvirt', isDefault: true },
    ]);
  });

  it('nulls a realm field of the wrong type and counts it, keeping the realm', () => {
    const c = twoRealms()
      .raw(
        'realms',
        JSON.stringify({
          defaultRealm: 'libvirt',
          realms: {
            libvirt: { id: 'libvirt', name: 7, driver: 'libvirt' },
            altvirt: { id: 'altvirt', name: 'A', driver: 'altvirt' },
          },
        }),
      )
      .build();
    const r = buildAll(c, ['vms']);
    expect(exportOf(r, 'realms').records.find((x) => x.id === 'libvirt')).toEqual({
      id: 'libvirt',
      name: null,
      driver: 'libvirt',
      isDefault: true,
    });
    expect(r.validation.samples).toContainEqual(
      expect.objectContaining({ route: 'GET /api/realms', path: 'realms.libvirt.name' }),
    );
  });

  it("a running VM whose realmID names another realm stays under the route's realm, and the disagreement is counted under validation without its value", () => {
    const c = twoRealms()
      .with('vms-active', [vm('v2', 'altvirt'), vm('v3', 'libvirt'), vm('v4', 'elsewhere')], 'altvirt')
      .build();
    const r = buildAll(c, ['vms']);
    expect(exportOf(r, 'active_vms').records.map((x) => [x.realmID, x.id])).toEqual([
      ['altvirt', 'v2'],
      ['altvirt', 'v3'],
      ['altvirt', 'v4'],
      ['libvirt', 'v1'],
    ]);
    const message = "names another realm than the route that listed the record; it is exported under the route's realm";
    expect(r.validation).toEqual({
      issues: 2,
      samples: [
        { route: 'GET /api/vms/altvirt/active', index: 1, path: 'realmID', message },
        { route: 'GET /api/vms/altvirt/active', index: 2, path: 'realmID', message },
      ],
    });
    // Counted without --include vms too: the route is read and validated all the same.
    expect(buildAll(c).validation.issues).toBe(2);
    // A realmID of the wrong type is zod's issue alone, not a second one.
    const wrongType = buildAll(
      twoRealms()
        .with('vms-active', [vm('v2', 'altvirt', { realmID: 7 })], 'altvirt')
        .build(),
      ['vms'],
    );
    expect(wrongType.validation.samples).toEqual([
      expect.objectContaining({
        route: 'GET /api/vms/altvirt/active',
        index: 0,
        path: 'realmID',
        message: expect.not.stringMatching(/another realm/),
      }),
    ]);
  });

  it('a config with thousands of owners keeps them all, in order', () => {
    const owners = Array.from({ length: 5000 }, (_, i) => `u${5000 - i}`);
    const r = buildAll(new CollectionBuilder().with('vms-configs', [config({ id: 'c', brick: 'b', owners })]).build(), [
      'vms',
    ]);
    expect(exportOf(r, 'vm_configs').records[0]!.owners).toEqual(owners);
  });

  it("a realm whose configs route failed: the realm's configs are missing and the export says so; with every realm failed it is unavailable", () => {
    const partial = buildAll(twoRealms().fail('vms-configs', 'HTTP 500', 'altvirt').build(), ['vms']);
    const e = exportOf(partial, 'vm_configs');
    expect(e.available).toBe(true);
    expect(e.reason).toBe('incomplete: GET /api/vms/altvirt/configs failed: HTTP 500');
    expect(e.records.map((r) => r.realmID)).toEqual(['libvirt', 'libvirt']);
    expect(exportOf(partial, 'active_vms').records).toHaveLength(2);
    const all = buildAll(new CollectionBuilder().fail('vms-configs', 'HTTP 500').build(), ['vms']);
    expect(exportOf(all, 'vm_configs')).toEqual({
      export: 'vm_configs',
      records: [],
      available: false,
      reason: 'GET /api/vms/libvirt/configs failed: HTTP 500',
    });
    expect(exportOf(all, 'users').available).toBe(true);
  });

  it('before 3.14.1, lists the --realms ids with every other column null and the reason in nullFields', () => {
    const r = buildAll(new CollectionBuilder({ release: '3.13.8', realms: ['libvirt', 'b-realm'] }).build(), ['vms']);
    expect(exportOf(r, 'realms')).toEqual({
      export: 'realms',
      available: true,
      records: [
        { id: 'b-realm', name: null, driver: null, isDefault: null },
        { id: 'libvirt', name: null, driver: null, isDefault: null },
      ],
    });
    const reason = `GET /api/realms was skipped: ${SKIP_3141}`;
    expect(r.nullFields.filter((n) => n.export === 'realms')).toEqual(
      ['name', 'driver', 'isDefault'].map((field) => ({
        export: 'realms',
        field,
        reason,
        proposedRoute: 'GET /api/realms',
      })),
    );
  });

  it('when GET /api/realms failed, realms is unavailable with its reason (no realm list to fall back on)', () => {
    const r = buildAll(new CollectionBuilder().fail('realms', 'HTTP 502').build(), ['vms']);
    expect(exportOf(r, 'realms')).toMatchObject({
      available: false,
      records: [],
      reason: 'GET /api/realms failed: HTTP 502',
    });
  });
});

describe('the VM maps in the spreadsheets', () => {
  it("writes a config's driveSlots (keyed by drive id) as one text column, a VM's drives one column per device", () => {
    const configs = [{ realmID: 'r', id: 'c', driveSlots: ['d1=0', 'd2=1'] }];
    const cols = sheetColumns('vm_configs', configs);
    expect(cols.filter((c) => c.column === 'driveSlots')).toEqual([
      { header: 'driveSlots', column: 'driveSlots', type: 'value' },
    ]);
    expect(
      cellOf(
        cols.find((c) => c.column === 'driveSlots')!,
        configs[0]!,
      ),
    ).toBe('d1=0; d2=1');
    const vms = [{ realmID: 'r', id: 'v', drives: ['vda=d1', 'vdb=d2'] }];
    expect(
      sheetColumns('active_vms', vms)
        .filter((c) => c.column === 'drives')
        .map((c) => c.header),
    ).toEqual(['drives.vda', 'drives.vdb']);
  });

  it('keeps a map with more keys than a sheet should have columns as one list column', () => {
    const many = Array.from({ length: MAX_KEY_COLUMNS + 1 }, (_, i) => `dev${i}=1`);
    expect(
      sheetColumns('active_vms', [{ resources_devices: many }]).filter((c) => c.column === 'resources_devices'),
    ).toEqual([{ header: 'resources_devices', column: 'resources_devices', type: 'value' }]);
    expect(
      sheetColumns('active_vms', [{ resources_devices: many.slice(1) }]).filter(
        (c) => c.column === 'resources_devices',
      ),
    ).toHaveLength(MAX_KEY_COLUMNS);
  });
});
