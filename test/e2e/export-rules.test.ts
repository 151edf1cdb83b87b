import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';
import { generateDataset } from '../fake/dataset.js';
import type { Dataset } from '../fake/types.js';

// The rules of CONTRACT section 5 on absent values, end to end: the built
// binary against the fake backend over HTTPS on 127.0.0.1. Expected values
// are computed from the fake's dataset, not from the client's output.

type Row = Record<string, unknown>;
const REALMS = [
  { id: 'libvirt', driver: 'libvirt' as const },
  { id: 'altvirt', driver: 'altvirt' as const },
];
const GROUPS = [
  ['files', 'cnt'],
  ['files', 'size'],
  ['vms', 'cnt'],
  ['vms', 'mem'],
  ['vms', 'cores'],
  ['drives', 'cnt'],
  ['drives', 'size'],
  ['drives', 'used'],
] as const;

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

async function snapshot(s: FakeSite, env: Record<string, string>) {
  const out = join(tmpDir(), 'snap');
  const res = await runCli(['--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out, '--quiet'], { env });
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
  const manifest = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')) as {
    nullFields: Array<{ export: string; field: string; reason: string }>;
  };
  const read = (name: string): Row[] => {
    const file = readdirSync(out).find((f) => f.replace(/^\d+-/, '').startsWith(`${name} (`))!;
    return JSON.parse(readFileSync(join(out, file), 'utf8'));
  };
  return { manifest, read };
}

function usageValue(row: Record<string, unknown> | undefined, group: string, field: string): unknown {
  const g = row?.[group] as Record<string, unknown> | undefined;
  return g?.[field] ?? 0;
}

/** A 3.14.1 dataset where one team has no usage row and one image lacks secureBoot, so both rules are exercised. */
function dataset314(): Dataset {
  const d = generateDataset({ realms: REALMS, seed: 2026 });
  const dropped = d.teams[0]!.id;
  d.teamUsage = d.teamUsage.filter((u) => u.id !== dropped);
  const image = d.perRealm.get('libvirt')!.images[0]!;
  delete image.secureBoot;
  return d;
}

describe('exports of a 3.14.1 backend', () => {
  it('apply documented defaults, count absent usage as 0, and list no version gap for fields some records lack', async () => {
    const d = dataset314();
    site = await startFakeSite({ dataset: d });
    const { manifest, read } = await snapshot(site, { SVC_TOKEN: ALL_TYPES_TOKEN.value });

    // Rule 1: noBackup defaults to true; brick libvirt defaults; version 0 for a base image.
    const drives = new Map(read('drives').map((r) => [r.id, r]));
    expect(d.drives.some((x) => x.noBackup === undefined)).toBe(true);
    for (const x of d.drives) expect(drives.get(x.id)!.noBackup, x.id).toBe(x.noBackup ?? true);
    const bricks = new Map(read('vm_hardware_setups').map((r) => [r.id, r]));
    for (const b of d.bricks) {
      const row = bricks.get(b.id)!;
      if (!b.libvirt) {
        expect([row.libvirt_pty, row.libvirt_nic, row.libvirt_clockOffset]).toEqual([null, null, null]);
        continue;
      }
      expect(row.libvirt_pty).toBe(b.libvirt.pty ?? false);
      expect(row.libvirt_nic).toBe(b.libvirt.nic ?? 'virtio');
      expect(row.libvirt_clockOffset).toBe(b.libvirt.clockOffset ?? (b.format === 'windows' ? 'localtime' : 'utc'));
    }
    const images = read('vm_images');
    for (const [realm, data] of d.perRealm) {
      for (const i of data.images) {
        const row = images.find((r) => r.realmID === realm && r.id === i.id)!;
        expect(row.version).toBe(i.version ?? 0);
        expect(row.settings_driveFormats).toEqual(i.settings?.driveFormats ?? null);
      }
    }

    // Rule 2: absent groups and a team without a usage row are 0.
    const teams = read('teams');
    const noRow = teams.find((t) => t.id === d.teams[0]!.id)!;
    for (const [g, f] of GROUPS) expect(noRow[`usage_${g}_${f}`]).toBe(0);
    for (const t of teams) {
      const u = d.teamUsage.find((x) => x.id === t.id) as unknown as Record<string, unknown> | undefined;
      for (const [g, f] of GROUPS) expect(t[`usage_${g}_${f}`], `${t.id} ${g}.${f}`).toBe(usageValue(u, g, f));
    }
    expect(d.projectUsage.some((u) => !u.files || !u.vms || !u.drives)).toBe(true);
    for (const r of read('resources_by_project')) {
      const u = d.projectUsage.find((x) => x.id === r.projectID) as unknown as Record<string, unknown>;
      for (const [g, f] of GROUPS) expect(r[`${g}_${f}`], `${r.projectID} ${g}.${f}`).toBe(usageValue(u, g, f));
    }

    // Rule 3: an image without secureBoot on 3.14.1 is null, with no version-gap entry.
    expect(images.some((r) => r.secureBoot === null)).toBe(true);
    expect(manifest.nullFields.filter((n) => /3\.14\.1/.test(n.reason))).toEqual([]);
    expect(manifest.nullFields.map((n) => `${n.export}.${n.field}`).sort()).toEqual([
      'vm_hardware_setups.deviceCount',
      'vm_hardware_setups.externalServers',
      'vm_hardware_setups.vmType',
    ]);

    // Rules 4 and 6: team settings and names, readable without joins.
    for (const t of d.teams) {
      const row = teams.find((r) => r.id === t.id)!;
      expect(JSON.parse(row.settings as string)).toEqual(t.settings);
    }
    const profiles = read('user_profiles');
    for (const u of d.users)
      expect(profiles.find((p) => p.id === u.id)).toMatchObject({
        firstName: u.firstName,
        lastName: u.lastName,
        state: u.state,
      });
  });
});

describe('exports of a 3.13.8 backend', () => {
  it('list the 3.14.1 fields as version gaps because its 3.14.1 routes answer 404, and still apply defaults', async () => {
    site = await startFakeSite({ release: '3.13.8', tokens: PER_TYPE_TOKENS, realms: [REALMS[0]!] });
    const d = site.backend.dataset;
    const { manifest, read } = await snapshot(site, perTypeTokenEnv());
    const gaps = manifest.nullFields.filter((n) => /was added in backend 3\.14\.1/.test(n.reason));
    expect(gaps.map((n) => `${n.export}.${n.field}`).sort()).toEqual(
      [
        'drives.hasMessage',
        'drives.keys',
        'drives.sizeOnDisk',
        'drives.snapshotPool',
        'team_memberships.joined',
        'team_memberships.modified',
        'team_memberships.perm',
        'vm_images.secureBoot',
      ].sort(),
    );
    for (const g of gaps) expect(g.reason).toMatch(/this backend predates it \(its 3\.14\.1 routes answer 404\)/);
    // Usage was not read: null, and listed with the skipped route as the reason.
    const teams = read('teams');
    expect(teams.every((t) => t.usage_vms_cnt === null)).toBe(true);
    expect(manifest.nullFields.find((n) => n.export === 'teams' && n.field === 'usage_vms_cnt')!.reason).toMatch(
      /GET \/api\/teams\/usage was skipped/,
    );
    const drives = read('drives');
    for (const x of d.drives) expect(drives.find((r) => r.id === x.id)!.noBackup).toBe(x.noBackup ?? true);
  });
});
