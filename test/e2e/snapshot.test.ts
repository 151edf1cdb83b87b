import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite, type FakeSiteOptions } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets, expectPrivateModes, leftovers, listFiles } from '../helpers/assert-output.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';
import { EXPORTS } from '../../src/exports/catalog.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const SECRETS = [TOKEN, ...PER_TYPE_TOKENS.map((t) => t.value)];
const TWO_REALMS = [
  { id: 'libvirt', driver: 'libvirt' as const },
  { id: 'altvirt', driver: 'altvirt' as const },
];
const NO_NETWORK = join(REPO_ROOT, 'test', 'helpers', 'no-network.mjs');

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

async function snapshot(
  s: FakeSite,
  out: string,
  extra: string[] = [],
  env: Record<string, string> = { SVC_TOKEN: TOKEN },
) {
  const res = await runCli(['--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out, ...extra], { env });
  expectNoSecrets(SECRETS, [out], [res.stdout, res.stderr]);
  return res;
}

function manifestOf(dir: string) {
  return JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8'));
}

function exportFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('_'));
}

function readExport(dir: string, name: string): Record<string, unknown>[] {
  const file = exportFiles(dir).find((f) => f.replace(/^\d+-/, '').startsWith(`${name} (`));
  if (!file) throw new Error(`no export ${name}`);
  return JSON.parse(readFileSync(join(dir, file), 'utf8'));
}

describe('a live snapshot', () => {
  it('writes the 15 exports and the manifest from a 3.14.1 backend with one token', async () => {
    site = await startFakeSite({ realms: TWO_REALMS } as FakeSiteOptions);
    const out = join(tmpDir(), 'snap');
    const res = await snapshot(site, out);
    expect(res.code).toBe(0);
    const files = exportFiles(out);
    expect(files).toHaveLength(15);
    const manifest = manifestOf(out);
    expect(manifest).toMatchObject({
      kind: 'snapshot',
      source: 'live',
      baseUrl: site.url,
      authMode: 'token',
      complete: true,
      validation: { issues: 0, samples: [] },
      drift: [],
    });
    expect(manifest.exports.map((e: { export: string }) => e.export)).toEqual(EXPORTS.map((e) => e.name));
    const [y, m, d] = manifest.date.split('-').map(Number);
    for (const e of manifest.exports) {
      expect(e.file).toBe(`${e.count}-${e.export} (${m}-${d}-${y}).json`);
      expect(e.available).toBe(true);
      expect(readExport(out, e.export)).toHaveLength(e.count);
    }
    expect(manifest.routes.every((r: { file: unknown }) => r.file === null)).toBe(true);
    // Counts follow the data the server holds.
    const ds = site.backend.dataset;
    expect(readExport(out, 'users')).toHaveLength(ds.users.length);
    expect(readExport(out, 'team_memberships')).toHaveLength(ds.teams.reduce((n, t) => n + t.members.length, 0));
    expect(readExport(out, 'vm_images')).toHaveLength(
      [...ds.perRealm.values()].reduce((n, r) => n + r.images.length, 0),
    );
    expect(new Set(readExport(out, 'vm_images').map((r) => r.realmID))).toEqual(new Set(['libvirt', 'altvirt']));
    // The reduced brick projection and the unknown device count are reported.
    const nulls = manifest.nullFields.map((n: { export: string; field: string }) => `${n.export}.${n.field}`);
    expect(nulls).toEqual(expect.arrayContaining(['vm_hardware_setups.vmType', 'vm_hardware_setups.externalServers']));
    expect(res.stdout).toMatch(/Snapshot \(live\)/);
    expectPrivateModes(out);
    expect(site.backend.requests.every((r) => r.method === 'GET' && !r.write)).toBe(true);
  });

  it('writes the 3.14.1-only exports as 0- files with reasons on a 3.13.8 backend with per-type tokens', async () => {
    site = await startFakeSite({
      release: '3.13.8',
      tokens: PER_TYPE_TOKENS,
    } as FakeSiteOptions);
    const out = join(tmpDir(), 'snap');
    const res = await snapshot(site, out, [], perTypeTokenEnv());
    expect(res.code).toBe(0);
    const manifest = manifestOf(out);
    expect(manifest.authMode).toBe('per-type');
    const unavailable = manifest.exports.filter((e: { available: boolean }) => !e.available);
    expect(unavailable.map((e: { export: string }) => e.export).sort()).toEqual(
      [
        'licensing_servers',
        'project_memberships',
        'resources_by_project',
        'security_levels',
        'security_requirements',
        'sub-admin_managed_objects',
        'user_certifications',
        'vm_hardware_setups',
      ].sort(),
    );
    for (const e of unavailable) {
      expect(e.count).toBe(0);
      expect(e.file).toMatch(new RegExp(`^0-${e.export} \\(`));
      expect(e.reason).toMatch(/route added in backend 3.14.1/);
      expect(readFileSync(join(out, e.file), 'utf8')).toBe('[]\n');
    }
    const nulls = manifest.nullFields.map((n: { export: string; field: string }) => `${n.export}.${n.field}`);
    expect(nulls).toEqual(
      expect.arrayContaining(['drives.sizeOnDisk', 'team_memberships.joined', 'teams.usage_vms_cnt']),
    );
    expect(readExport(out, 'drives').every((r) => r.sizeOnDisk === null)).toBe(true);
  });

  it('builds byte-identical exports from its raw/ on replay, without opening a socket', async () => {
    site = await startFakeSite({ realms: TWO_REALMS } as FakeSiteOptions);
    const parent = tmpDir();
    const live = join(parent, 'live');
    expect((await snapshot(site, live, ['--raw'])).code).toBe(0);
    expect(listFiles(live).filter((f) => f.startsWith('raw/'))).toContain('raw/_collection-manifest.json');
    const liveManifest = manifestOf(live);
    expect(liveManifest.routes.every((r: { file: string | null }) => r.file !== null)).toBe(true);
    await site.close();
    site = undefined;

    const netlog = join(parent, 'netlog');
    const replay = join(parent, 'replay');
    const res = await runCli(['--replay', join(live, 'raw'), '--out-dir', replay], {
      env: { NODE_OPTIONS: `--import=${NO_NETWORK}`, SVC_TEST_NETLOG: netlog },
    });
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    expect(existsSync(netlog)).toBe(false);
    for (const f of exportFiles(live))
      expect(readFileSync(join(replay, f)).equals(readFileSync(join(live, f))), f).toBe(true);
    expect(exportFiles(replay).sort()).toEqual(exportFiles(live).sort());
    const m = manifestOf(replay);
    expect(m).toMatchObject({
      source: 'replay',
      baseUrl: liveManifest.baseUrl,
      time: liveManifest.time,
      date: liveManifest.date,
      authMode: 'token',
    });
  });

  it('refuses to replay a collection whose file was changed, naming the file', async () => {
    const parent = tmpDir();
    const raw = join(parent, 'raw');
    cpSync(join(REPO_ROOT, 'recordings', 'platform-3.14.1'), raw, { recursive: true });
    const users = JSON.parse(readFileSync(join(raw, 'api-users.json'), 'utf8'));
    users[0].role = 'SuperAdmin';
    writeFileSync(join(raw, 'api-users.json'), JSON.stringify(users));
    const res = await runCli(['--replay', raw, '--out-dir', join(parent, 'out')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/api-users\.json .*does not match the sha256/);
    expect(existsSync(join(parent, 'out'))).toBe(false);
    expect(leftovers(parent)).toEqual([]);
  });

  it('refuses to replay a directory that is not a collection', async () => {
    const dir = tmpDir();
    const res = await runCli(['--replay', dir]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/_collection-manifest\.json/);
    const missing = await runCli(['--replay', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
  });

  it('refuses to replay a collection whose baseUrl is not an http(s) URL (a newline would add lines to the output)', async () => {
    for (const baseUrl of ['https://x.example/a\nsvc_snapshot_exit_code{x} 0\n#', 'ftp://x.example', 'not a url']) {
      const rec = join(tmpDir(), 'rec');
      cpSync(join(REPO_ROOT, 'recordings', 'platform-3.14.1'), rec, { recursive: true });
      const file = join(rec, '_collection-manifest.json');
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), baseUrl }));
      const res = await runCli(['--replay', rec, '--out-dir', join(tmpDir(), 'out')]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('is not a collection manifest (baseUrl: not an http(s) URL)');
      expect(res.stdout).not.toContain('svc_snapshot_exit_code');
    }
  });

  it("refuses to replay a snapshot's raw/ into that snapshot, which would delete the collection with it (exit 2)", async () => {
    const cwd = tmpDir();
    const snap = join(cwd, 'svc-snapshot-2026-11-21');
    const rec = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
    expect((await runCli(['--replay', rec, '--out-dir', snap, '--raw', '--quiet'], { cwd })).code).toBe(0);
    const before = listFiles(join(snap, 'raw'));
    for (const args of [['--out-dir', snap], []]) {
      const res = await runCli(['--replay', join(snap, 'raw'), ...args, '--quiet'], { cwd });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`lies inside ${snap}, which this snapshot replaces`);
      expect(listFiles(join(snap, 'raw'))).toEqual(before);
    }
  });

  it('exports a wrong-type field as null, reports unknown fields, and fails with --strict', async () => {
    site = await startFakeSite();
    const drives = JSON.parse(site.backend.responseBody('drives'));
    drives[1].capacity = 'a lot';
    drives[2].tier = 'gold';
    site.backend.setFault('drives', { body: drives });
    const out = join(tmpDir(), 'snap');
    const res = await snapshot(site, out);
    expect(res.code).toBe(0);
    const manifest = manifestOf(out);
    expect(manifest.validation.issues).toBe(1);
    expect(manifest.validation.samples[0]).toMatchObject({ route: 'GET /api/drives', index: 1, path: 'capacity' });
    expect(JSON.stringify(manifest.validation)).not.toContain('a lot');
    expect(manifest.drift).toEqual([{ route: 'GET /api/drives', unknownFields: ['tier'] }]);
    const row = readExport(out, 'drives').find((r) => r.id === drives[1].id)!;
    expect(row.capacity).toBeNull();
    expect(res.stderr).toMatch(/warning: GET \/api\/drives returned fields the models do not know: tier/);

    const strictOut = join(tmpDir(), 'strict');
    const strict = await snapshot(site, strictOut, ['--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/--strict: 1 schema problem/);
    expect(strict.stderr).not.toContain('a lot');
    expect(existsSync(strictOut)).toBe(false);
  });

  it('fails on a persistent 500 and leaves the older snapshot untouched', async () => {
    site = await startFakeSite();
    site.backend.setFault('teams', { statuses: [500], always: true });
    const parent = tmpDir();
    const out = join(parent, 'snap');
    mkdirSync(out);
    // An earlier snapshot: the only kind of directory a snapshot may replace.
    writeFileSync(
      join(out, '_snapshot-manifest.json'),
      JSON.stringify({
        kind: 'snapshot',
        tool: { name: 'svc-snapshot', version: '0.0.0' },
        date: '2026-01-01',
        complete: true,
        exports: [{ export: 'users', file: 'old.json' }],
      }),
    );
    writeFileSync(join(out, 'old.json'), '[]');
    const res = await snapshot(site, out, ['--retries', '1']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/GET \/api\/teams: HTTP 500/);
    expect(res.stderr).toMatch(/--allow-partial/);
    expect(readdirSync(out).sort()).toEqual(['_snapshot-manifest.json', 'old.json']);
    expect(leftovers(parent)).toEqual([]);
  });

  it('publishes with --allow-partial, marking the failed exports and exiting 4', async () => {
    site = await startFakeSite();
    site.backend.setFault('teams', { statuses: [500], always: true });
    const out = join(tmpDir(), 'snap');
    const res = await snapshot(site, out, ['--retries', '1', '--allow-partial']);
    expect(res.code).toBe(4);
    const manifest = manifestOf(out);
    expect(manifest.complete).toBe(false);
    const teams = manifest.exports.find((e: { export: string }) => e.export === 'teams');
    expect(teams).toMatchObject({ available: false, count: 0 });
    expect(teams.reason).toMatch(/GET \/api\/teams failed/);
    expect(manifest.exports.find((e: { export: string }) => e.export === 'users').available).toBe(true);
    expect(res.stdout).toMatch(/INCOMPLETE/);
  });

  it.each([
    ['Pacific/Kiritimati', 14],
    ['Pacific/Pago_Pago', -11],
  ])('names files by the local date under TZ=%s', async (tz, offsetHours) => {
    site = await startFakeSite();
    const out = join(tmpDir(), 'snap');
    const before = new Date();
    const res = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out], {
      env: { SVC_TOKEN: TOKEN, TZ: tz },
    });
    expect(res.code).toBe(0);
    const local = new Date(before.getTime() + offsetHours * 3600_000);
    const ymd = `${local.getUTCFullYear()}-${String(local.getUTCMonth() + 1).padStart(2, '0')}-${String(local.getUTCDate()).padStart(2, '0')}`;
    const manifest = manifestOf(out);
    expect(manifest.date).toBe(ymd);
    expect(manifest.time.slice(0, 10)).toBe(before.toISOString().slice(0, 10));
    expect(manifest.exports[0].file).toBe(
      `${manifest.exports[0].count}-users (${local.getUTCMonth() + 1}-${local.getUTCDate()}-${local.getUTCFullYear()}).json`,
    );
  });

  it('uses ./svc-snapshot-<date> by default and replaces it on a second run', async () => {
    const cwd = tmpDir();
    const first = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1')], { cwd });
    expect(first.code).toBe(0);
    expect(readdirSync(cwd)).toEqual(['svc-snapshot-2026-11-21']);
    const second = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--quiet'], { cwd });
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
    expect(readdirSync(cwd)).toEqual(['svc-snapshot-2026-11-21']);
  });
});
