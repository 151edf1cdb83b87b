import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';
import { generateDataset } from '../fake/dataset.js';
import type { Dataset } from '../fake/types.js';
import { parseCsv } from '../helpers/csv-parse.js';

// CONTRACT section 14 end to end: the built binary against the fake backend
// over HTTPS on 127.0.0.1. Expected values come from the fake's dataset.

type Row = Record<string, unknown>;
const REALMS = [
  { id: 'libvirt', driver: 'libvirt' as const },
  { id: 'altvirt', driver: 'altvirt' as const },
];
const VM_EXPORTS = ['vm_configs', 'active_vms', 'realms'];
const HOSTILE = '=HYPERLINK("http://evil.example","x")';

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

function files(dir: string): string[] {
  return readdirSync(dir).sort();
}

function manifestOf(dir: string) {
  return JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8'));
}

function fileOf(dir: string, name: string, ext = 'json'): string {
  const f = readdirSync(dir).find((x) => new RegExp(`^\\d+-${name} \\(.*\\)\\.${ext}$`).test(x));
  if (!f) throw new Error(`no ${name}.${ext} in ${dir}`);
  return join(dir, f);
}

function read(dir: string, name: string): Row[] {
  return JSON.parse(readFileSync(fileOf(dir, name), 'utf8'));
}

/**
 * Two realms; a config id repeated in both; a config with 3,000 owners;
 * hostile text in the new text columns (config name and description, VM
 * name, realm name).
 */
function dataset(): Dataset {
  const d = generateDataset({ realms: REALMS, seed: 35 });
  const lib = d.perRealm.get('libvirt')!;
  const alt = d.perRealm.get('altvirt')!;
  alt.configs[1]!.id = lib.configs[1]!.id;
  lib.configs[2]!.owners = Array.from({ length: 3000 }, (_, i) => `user-${String(i).padStart(4, '0')}`);
  lib.configs[0]!.name = HOSTILE;
  lib.configs[0]!.description = '+1 "quoted", and\na newline';
  alt.activeVms[0]!.name = '@SUM(A1:A9)';
  d.realms.realms.altvirt = { ...d.realms.realms.altvirt!, name: '-2+3' };
  return d;
}

async function snapshot(
  s: FakeSite,
  out: string,
  extra: string[] = [],
  env: Record<string, string> = { SVC_TOKEN: ALL_TYPES_TOKEN.value },
) {
  return runCli(['--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out, '--quiet', ...extra], { env });
}

describe('--include vms', () => {
  it('adds vm_configs, active_vms and realms after the 15, from every realm, keyed by realm and id; replay and convert give the same files', async () => {
    const d = dataset();
    site = await startFakeSite({ dataset: d });
    const parent = tmpDir();
    const plain = join(parent, 'plain');
    const vms = join(parent, 'vms');
    expect((await snapshot(site, plain, ['--format', 'csv'])).code).toBe(0);
    const res = await snapshot(site, vms, ['--include', 'vms', '--raw', '--format', 'csv,xlsx']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);

    const m = manifestOf(vms);
    expect(m.include).toEqual(['vms']);
    expect(manifestOf(plain)).not.toHaveProperty('include');
    expect(m.exports.slice(15).map((e: { export: string }) => e.export)).toEqual(VM_EXPORTS);
    expect(manifestOf(plain).exports.map((e: { export: string }) => e.export)).not.toContain('vm_configs');
    // The 15 are the same bytes either way.
    for (const f of files(plain).filter((x) => /\.(json|csv)$/.test(x) && !x.startsWith('_'))) {
      expect(readFileSync(join(vms, f)), f).toEqual(readFileSync(join(plain, f)));
    }

    // Every config of every realm, the repeated id once per realm, sorted by realm then id.
    const configs = read(vms, 'vm_configs');
    const expected = REALMS.flatMap((r) => d.perRealm.get(r.id)!.configs.map((c) => `${r.id}/${c.id}`)).sort();
    expect(configs.map((c) => `${c.realmID}/${c.id}`)).toEqual(expected);
    const repeated = d.perRealm.get('libvirt')!.configs[1]!.id;
    expect(configs.filter((c) => c.id === repeated).map((c) => c.realmID)).toEqual(['altvirt', 'libvirt']);
    const many = configs.find((c) => c.id === d.perRealm.get('libvirt')!.configs[2]!.id && c.realmID === 'libvirt')!;
    expect(many.owners).toHaveLength(3000);
    expect(many.owners).toEqual(d.perRealm.get('libvirt')!.configs[2]!.owners);
    const src = d.perRealm.get('libvirt')!.configs[0]!;
    const first = configs.find((c) => c.realmID === 'libvirt' && c.id === src.id)!;
    expect(first.name).toBe(HOSTILE);
    expect(first.driveSlots).toEqual(
      Object.entries(src.driveSlots)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`),
    );
    expect(first.services).toBe(JSON.stringify(src.services));

    const active = read(vms, 'active_vms');
    expect(active).toHaveLength(REALMS.reduce((n, r) => n + d.perRealm.get(r.id)!.activeVms.length, 0));
    const vm = d.perRealm.get('altvirt')!.activeVms[0]!;
    const row = active.find((a) => a.realmID === 'altvirt' && a.id === vm.id)!;
    expect(row.name).toBe('@SUM(A1:A9)');
    expect(row.authedUsers).toEqual(vm.authedUsers);
    expect(row.pubkey_modulus).toBe(vm.pubkey?.modulus ?? null);
    expect(row.vpn_port).toBe(vm.vpn?.port ?? null);
    expect(row).not.toHaveProperty('vmcInfo');

    expect(read(vms, 'realms')).toEqual([
      { id: 'altvirt', name: '-2+3', driver: 'altvirt', isDefault: d.realms.defaultRealm === 'altvirt' },
      {
        id: 'libvirt',
        name: d.realms.realms.libvirt!.name,
        driver: 'libvirt',
        isDefault: d.realms.defaultRealm === 'libvirt',
      },
    ]);

    // Spreadsheet escaping applies to the new text columns: no formula, ever.
    const csv = parseCsv(readFileSync(fileOf(vms, 'vm_configs', 'csv'), 'utf8').replace(/^\uFEFF/, ''));
    const header = csv[0]!;
    const csvRow = csv.find((r) => r[header.indexOf('id')] === src.id && r[header.indexOf('realmID')] === 'libvirt')!;
    expect(csvRow[header.indexOf('name')]).toBe(`'${HOSTILE}`);
    expect(csvRow[header.indexOf('description')]).toBe(`'+1 "quoted", and\na newline`);
    expect(readFileSync(fileOf(vms, 'realms', 'csv'), 'utf8')).toContain("'-2+3");
    expect(readFileSync(fileOf(vms, 'active_vms', 'csv'), 'utf8')).toContain("'@SUM(A1:A9)");

    // Replay of its raw/ with --include vms: the same export files.
    const replay = join(parent, 'replay');
    expect(
      (await runCli(['--replay', join(vms, 'raw'), '--out-dir', replay, '--include', 'vms', '--quiet'])).code,
    ).toBe(0);
    for (const e of m.exports)
      expect(readFileSync(join(replay, e.file)), e.file).toEqual(readFileSync(join(vms, e.file)));

    // convert of it writes the three exports' forms, the same bytes as --format wrote.
    const conv = join(parent, 'conv');
    expect((await runCli(['convert', vms, '--format', 'csv', '--out-dir', conv, '--quiet'])).code).toBe(0);
    for (const f of files(conv)) expect(readFileSync(join(conv, f)), f).toEqual(readFileSync(join(vms, f)));
    expect(files(conv)).toHaveLength(18);
    // convert --include vms of a snapshot taken without it: usage error naming the way out.
    const refused = await runCli([
      'convert',
      plain,
      '--format',
      'csv',
      '--include',
      'vms',
      '--out-dir',
      join(parent, 'conv2'),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/taken without --include vms.*--replay/);
    expect(readdirSync(parent)).not.toContain('conv2');

    expect((await runCli(['verify', vms, '--quiet'])).code).toBe(0);
  });

  it('a realm whose configs route fails: refused without --allow-partial; with it, vm_configs holds the other realm and says what is missing', async () => {
    site = await startFakeSite({ dataset: generateDataset({ realms: REALMS, seed: 7 }) });
    site.backend.setFault({ route: 'vms-configs', realm: 'altvirt' }, { statuses: [500], always: true });
    const parent = tmpDir();
    const refused = await snapshot(site, join(parent, 'a'), ['--include', 'vms', '--retries', '0']);
    expect(refused.code).toBe(1);
    expect(readdirSync(parent)).toEqual([]);

    const out = join(parent, 'b');
    const res = await snapshot(site, out, ['--include', 'vms', '--retries', '0', '--allow-partial']);
    expect(res.code).toBe(4);
    const m = manifestOf(out);
    expect(m.complete).toBe(false);
    const entry = (name: string) => m.exports.find((e: { export: string }) => e.export === name);
    expect(entry('vm_configs')).toMatchObject({
      available: true,
      reason: expect.stringMatching(/^incomplete: GET \/api\/vms\/altvirt\/configs failed/),
    });
    expect(read(out, 'vm_configs').map((c) => c.realmID)).toEqual(
      site.backend.dataset.perRealm.get('libvirt')!.configs.map(() => 'libvirt'),
    );
    expect(entry('active_vms')).toMatchObject({
      available: true,
      count: REALMS.reduce((n, r) => n + site!.backend.dataset.perRealm.get(r.id)!.activeVms.length, 0),
    });
    expect(entry('active_vms')).not.toHaveProperty('reason');
    expect(entry('users')).toMatchObject({ available: true });
    expect(m.nullFields).toContainEqual(
      expect.objectContaining({ export: 'vm_hardware_setups', field: 'vmConfigCount' }),
    );
  });

  it("a running VM whose realmID names another realm than its route: exported under the route's realm, reported as a validation issue in the manifest, the summary and the metrics; fatal with --strict", async () => {
    const d = generateDataset({ realms: REALMS, seed: 35 });
    const alt = d.perRealm.get('altvirt')!;
    const moved = alt.activeVms[0]!;
    moved.realmID = 'libvirt';
    site = await startFakeSite({ dataset: d });
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const metrics = join(parent, 'svc.prom');
    const res = await runCli(
      [
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--out-dir',
        out,
        '--include',
        'vms',
        '--metrics-file',
        metrics,
      ],
      { env: { SVC_TOKEN: ALL_TYPES_TOKEN.value } },
    );
    expect(res.code).toBe(0);
    const rows = read(out, 'active_vms');
    expect(rows.filter((r) => r.id === moved.id).map((r) => r.realmID)).toEqual(['altvirt']);
    expect(rows).toHaveLength(d.perRealm.get('libvirt')!.activeVms.length + alt.activeVms.length);
    const index = alt.activeVms.indexOf(moved);
    expect(manifestOf(out).validation).toEqual({
      issues: 1,
      samples: [
        {
          route: 'GET /api/vms/altvirt/active',
          index,
          path: 'realmID',
          message: "names another realm than the route that listed the record; it is exported under the route's realm",
        },
      ],
    });
    expect(res.stderr).toMatch(/1 validation issue in the responses/);
    expect(res.stdout).toMatch(/validation: 1 issue in the responses/);
    expect(readFileSync(metrics, 'utf8')).toMatch(/^svc_snapshot_validation_issues\{[^}]*\} 1$/m);
    const strict = await snapshot(site, join(parent, 'strict'), ['--include', 'vms', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(
      `--strict: 1 schema problem in the responses (GET /api/vms/altvirt/active record ${index} realmID: names another realm than the route that listed the record`,
    );
    expect(readdirSync(parent).sort()).toEqual(['snap', 'svc.prom']);
  });

  it('on 3.13.8 lists the --realms ids as realms, name and driver null with the reason in nullFields (per-type tokens: VM)', async () => {
    site = await startFakeSite({ release: '3.13.8', tokens: PER_TYPE_TOKENS });
    const out = join(tmpDir(), 'snap');
    const res = await snapshot(site, out, ['--include', 'vms', '--realms', 'libvirt'], perTypeTokenEnv());
    expect(res.code).toBe(0);
    expect(read(out, 'realms')).toEqual([{ id: 'libvirt', name: null, driver: null, isDefault: null }]);
    const nulls = manifestOf(out).nullFields.filter((n: { export: string }) => n.export === 'realms');
    expect(nulls.map((n: { field: string }) => n.field)).toEqual(['name', 'driver', 'isDefault']);
    for (const n of nulls)
      expect(n).toMatchObject({
        reason: expect.stringMatching(/^GET \/api\/realms was skipped: route added in backend 3.14.1/),
        proposedRoute: 'GET /api/realms',
      });
    expect(read(out, 'vm_configs')).toHaveLength(site.backend.dataset.perRealm.get('libvirt')!.configs.length);
  });

  it('history load --include vms builds them from a raw collection; as-of gives back the files; log follows a config by realm and id', async () => {
    const d = dataset();
    site = await startFakeSite({ dataset: d });
    const parent = tmpDir();
    const raw = join(parent, 'raw');
    expect(
      (
        await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', raw, '--quiet'], {
          env: { SVC_TOKEN: ALL_TYPES_TOKEN.value },
        })
      ).code,
    ).toBe(0);
    const snap = join(parent, 'snap');
    expect((await runCli(['--replay', raw, '--out-dir', snap, '--include', 'vms', '--quiet'])).code).toBe(0);
    const db = join(parent, 'h.sqlite');
    const load = await runCli(['history', 'load', raw, '--include', 'vms', '--history', db, '--quiet']);
    expect(load.code).toBe(0);
    const asOf = join(parent, 'asof');
    expect((await runCli(['history', 'as-of', '2099-01-01', '--history', db, '--out-dir', asOf, '--quiet'])).code).toBe(
      0,
    );
    const m = manifestOf(snap);
    for (const e of m.exports)
      expect(readFileSync(join(asOf, e.file)), e.file).toEqual(readFileSync(join(snap, e.file)));
    const repeated = d.perRealm.get('libvirt')!.configs[1]!.id;
    const log = await runCli(['history', 'log', 'vm_configs', 'altvirt', repeated, '--history', db, '--json']);
    expect(log.code).toBe(0);
    expect(JSON.parse(log.stdout).versions[0].record).toMatchObject({ realmID: 'altvirt', id: repeated });
  });

  it('history load --include vms of a snapshot taken without it loads what it holds and says so', async () => {
    const parent = tmpDir();
    const snap = join(parent, 'snap');
    expect(
      (await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', snap, '--quiet'])).code,
    ).toBe(0);
    const db = join(parent, 'h.sqlite');
    const load = await runCli(['history', 'load', snap, '--include', 'vms', '--history', db]);
    expect(load.code).toBe(0);
    expect(load.stderr).toMatch(/was taken without --include vms: its records of those exports are left as they were/);
    const asOf = join(parent, 'asof');
    expect((await runCli(['history', 'as-of', '2099-01-01', '--history', db, '--out-dir', asOf, '--quiet'])).code).toBe(
      0,
    );
    expect(files(asOf)).toEqual(files(snap));
  });

  it('refuses an unknown group with exit 2, naming the valid ones, before any request', async () => {
    site = await startFakeSite();
    const res = await snapshot(site, join(tmpDir(), 'x'), ['--include', 'vms,disks']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--include takes a comma-separated list of vms; "disks" is not one of them/);
    expect(site.backend.requests).toEqual([]);
  });
});
