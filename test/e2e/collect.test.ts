import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite, type FakeSiteOptions } from '../helpers/fake-site.js';
import { runCli, startCli, tmpDir, stderrSeen } from '../helpers/run-cli.js';
import { expectNoSecrets, expectPrivateModes, leftovers, listFiles } from '../helpers/assert-output.js';
import { getUntrustedCerts } from '../fake/certs.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';
import { ROUTES } from '../../src/api/catalog.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const USER_ONLY = PER_TYPE_TOKENS[0]!;
const ALL_SECRETS = [TOKEN, ...PER_TYPE_TOKENS.map((t) => t.value), 'fake-token-without-vm', 'fake-token-unknown'];

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

async function start(opts: Partial<FakeSiteOptions> = {}): Promise<FakeSite> {
  site = await startFakeSite(opts as FakeSiteOptions);
  return site;
}

function sha256(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

function readManifest(dir: string) {
  return JSON.parse(readFileSync(join(dir, '_collection-manifest.json'), 'utf8'));
}

async function collect(
  s: FakeSite,
  out: string,
  extra: string[] = [],
  env: Record<string, string> = { SVC_TOKEN: TOKEN },
) {
  const res = await runCli(['collect', '--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out, ...extra], {
    env,
  });
  expectNoSecrets(ALL_SECRETS, [out], [res.stdout, res.stderr]);
  return res;
}

describe('svc-snapshot collect against a 3.14.1 backend', () => {
  it('collects every route with one token, byte for byte, with a complete manifest', async () => {
    const s = await start({
      realms: [
        { id: 'libvirt', driver: 'libvirt' },
        { id: 'alt', driver: 'altvirt' },
      ],
    });
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out);
    expect(res.stderr).not.toMatch(/error/i);
    expect(res.code).toBe(0);

    const manifest = readManifest(out);
    expect(manifest).toMatchObject({
      kind: 'collection',
      tool: { name: 'svc-snapshot', version: '1.0.0' },
      baseUrl: s.url,
      authMode: 'token',
      realms: { source: 'GET /api/realms', ids: ['libvirt', 'alt'] },
    });
    expect(manifest.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(manifest.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // 11 routes once, 3 per realm.
    expect(manifest.routes).toHaveLength(ROUTES.length + 2 * 3 - 3);
    expect(manifest.routes[0].route).toBe('GET /api/realms');
    for (const r of manifest.routes) {
      expect(r).toMatchObject({ status: 200, attempts: 1 });
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      const body = readFileSync(join(out, r.file));
      expect(body.length).toBe(r.bytes);
      expect(sha256(body)).toBe(r.sha256);
    }
    // Byte for byte what the server sent.
    const byRoute = Object.fromEntries(manifest.routes.map((r: { route: string; file: string }) => [r.route, r.file]));
    expect(readFileSync(join(out, byRoute['GET /api/users'])).toString()).toBe(s.backend.responseBody('users'));
    expect(readFileSync(join(out, byRoute['GET /api/vms/alt/configs'])).toString()).toBe(
      s.backend.responseBody('vms-configs', 'alt'),
    );
    expect(readFileSync(join(out, 'api-vms-images-alt.json')).toString()).toBe(
      s.backend.responseBody('vms-images', 'alt'),
    );
    expect(listFiles(out)).toContain('api-vms-libvirt-active.json');

    expectPrivateModes(out);
    // Only GET routes, the token only in the cookie.
    expect(s.backend.requests.every((r) => r.method === 'GET' && !r.write)).toBe(true);
    expect(s.backend.requests.every((r) => r.auth === 'cookie')).toBe(true);
  });

  it('keeps hostile realm ids inside the output directory', async () => {
    const s = await start({
      realms: [
        { id: '../../evil', driver: 'libvirt' },
        { id: 'a/b c', driver: 'altvirt' },
        { id: '.hidden', driver: 'libvirt' },
      ],
    });
    const parent = tmpDir();
    const out = join(parent, 'raw');
    const res = await collect(s, out);
    expect(res.code).toBe(0);
    expect(readdirSync(parent)).toEqual(['raw']);
    const files = listFiles(out);
    expect(files.every((f) => !f.includes('/'))).toBe(true);
    expect(files).toContain('api-vms-%2E%2E%2F%2E%2E%2Fevil-active.json');
    expect(files).toContain('api-vms-a%2Fb%20c-configs.json');
    expect(files).toContain('api-vms-images-%2Ehidden.json');
    const manifest = readManifest(out);
    const evil = manifest.routes.find((r: { route: string }) => r.route === 'GET /api/vms/..%2F..%2Fevil/active');
    expect(evil.file).toBe('api-vms-%2E%2E%2F%2E%2E%2Fevil-active.json');
    expect(readFileSync(join(out, evil.file)).toString()).toBe(s.backend.responseBody('vms-active', '../../evil'));
  });
});

describe('svc-snapshot collect against a 3.13.8 backend', () => {
  it('uses each type its own token and records the 3.14.1 routes as skipped', async () => {
    const s = await start({
      release: '3.13.8',
      tokens: PER_TYPE_TOKENS,
    });
    const out = join(tmpDir(), 'raw');
    const env = perTypeTokenEnv();
    const res = await collect(s, out, ['--realms', 'libvirt'], env);
    expect(res.code).toBe(0);
    const manifest = readManifest(out);
    expect(manifest.authMode).toBe('per-type');
    expect(manifest.realms).toEqual({ source: '--realms', ids: ['libvirt'] });
    const skipped = manifest.routes.filter((r: { skipped?: boolean }) => r.skipped);
    expect(skipped.map((r: { route: string }) => r.route).sort()).toEqual(
      ROUTES.filter((r) => r.since)
        .map((r) => `GET ${r.path}`)
        .sort(),
    );
    for (const r of skipped)
      expect(r).toMatchObject({ status: 404, file: null, reason: 'route added in backend 3.14.1; not served here' });
    expect(listFiles(out)).toEqual([
      '_collection-manifest.json',
      'api-drives.json',
      'api-projects.json',
      'api-teams.json',
      'api-users.json',
      'api-vms-images-libvirt.json',
      'api-vms-libvirt-active.json',
      'api-vms-libvirt-configs.json',
    ]);
  });

  it('skips with a reason the routes of a type that has no token', async () => {
    const s = await start({ release: '3.13.8', tokens: [USER_ONLY] });
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, [], { SVC_TOKEN_USER: USER_ONLY.value });
    expect(res.code).toBe(0);
    const drives = readManifest(out).routes.find((r: { route: string }) => r.route === 'GET /api/drives');
    expect(drives).toMatchObject({ status: null, file: null, skipped: true });
    expect(drives.reason).toMatch(/SVC_TOKEN_DRIVE/);
    expect(s.backend.requests.some((r) => r.route === 'drives')).toBe(false);
  });
});

describe('svc-snapshot collect when things go wrong', () => {
  it('stops with exit 3 on 401 and publishes nothing', async () => {
    const s = await start();
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, [], { SVC_TOKEN: 'fake-token-unknown' });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(
      /401 on GET \/api\/realms: the token \(from SVC_TOKEN\) was refused: the server does not accept the token itself \(it is missing, invalid or expired\)/,
    );
    expect(res.stderr).not.toMatch(/needs type|--token-vm|SVC_TOKEN_VM/);
    expect(existsSync(out)).toBe(false);
  });

  it('records a persistent 500 and exits 4 with the rest collected', async () => {
    const s = await start();
    s.backend.setFault('teams', { statuses: [500], always: true });
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, ['--retries', '2']);
    expect(res.code).toBe(4);
    const teams = readManifest(out).routes.find((r: { route: string }) => r.route === 'GET /api/teams');
    expect(teams).toMatchObject({ status: 500, file: null, attempts: 3 });
    expect(teams.error).toMatch(/500/);
    expect(listFiles(out)).toContain('api-users.json');
    expect(listFiles(out)).not.toContain('api-teams.json');
    expect(s.backend.requests.filter((r) => r.route === 'teams')).toHaveLength(3);
    expect(res.stdout).toMatch(/FAILED\s+GET \/api\/teams/);
  });

  it('retries a truncated body and records it when it stays truncated', async () => {
    const s = await start();
    s.backend.setFault('drives', { truncate: true });
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, ['--retries', '1']);
    expect(res.code).toBe(4);
    const d = readManifest(out).routes.find((r: { route: string }) => r.route === 'GET /api/drives');
    expect(d).toMatchObject({ status: null, attempts: 2 });
    expect(d.error).toMatch(/closed|truncated/);
  });

  it('gives up on a route slower than --timeout', async () => {
    const s = await start();
    s.backend.setFault('teams', { delayMs: 4000 });
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, ['--timeout', '1', '--retries', '0']);
    expect(res.code).toBe(4);
    const t = readManifest(out).routes.find((r: { route: string }) => r.route === 'GET /api/teams');
    expect(t.error).toMatch(/no complete response within 1 s \(--timeout\)/);
  });

  it('refuses an untrusted certificate and points at --ca-file', async () => {
    const s = await start({ certs: getUntrustedCerts() } as Partial<FakeSiteOptions>);
    const out = join(tmpDir(), 'raw');
    // The CA that signed nothing of this server: verification must fail.
    const { getTestCerts } = await import('../fake/certs.js');
    const res = await runCli(['collect', '--base-url', s.url, '--ca-file', getTestCerts().caFile, '--out-dir', out], {
      env: { SVC_TOKEN: TOKEN },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/TLS verification failed/);
    expect(res.stderr).toMatch(/--ca-file/);
    expect(existsSync(out)).toBe(false);
    expect(s.backend.requests).toHaveLength(0);
    expectNoSecrets(ALL_SECRETS, [], [res.stdout, res.stderr]);
  });

  it('trusts the CA of NODE_EXTRA_CA_CERTS, alone and together with --ca-file', async () => {
    const s = await start();
    const alone = join(tmpDir(), 'raw');
    const res = await runCli(['collect', '--base-url', s.url, '--out-dir', alone], {
      env: { SVC_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: s.caFile },
    });
    expect(res.code).toBe(0);
    // --ca-file replaces nothing: the NODE_EXTRA_CA_CERTS CA still counts.
    const { getUntrustedCerts: other } = await import('../fake/certs.js');
    const both = join(tmpDir(), 'raw');
    const res2 = await runCli(['collect', '--base-url', s.url, '--ca-file', other().caFile, '--out-dir', both], {
      env: { SVC_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: s.caFile },
    });
    expect(res2.code).toBe(0);
  });

  it('stops at once with exit 1 when the host is unreachable (a closed port on 127.0.0.1)', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const { getTestCerts } = await import('../fake/certs.js');
    const out = join(tmpDir(), 'raw');
    const res = await runCli(
      [
        'collect',
        '--base-url',
        `https://127.0.0.1:${port}`,
        '--ca-file',
        getTestCerts().caFile,
        '--out-dir',
        out,
        '--retries',
        '1',
      ],
      { env: { SVC_TOKEN: TOKEN } },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot collect from https:\/\/127\.0\.0\.1:\d+: connection refused/);
    expect(res.stderr.match(/failed {2}GET/g)).toHaveLength(1); // only the first route was tried
    expect(existsSync(out)).toBe(false);
  });

  it('warns that --realms is ignored where the backend lists its realms', async () => {
    const s = await start();
    const out = join(tmpDir(), 'raw');
    const res = await collect(s, out, ['--realms', 'elsewhere']);
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/warning: --realms is ignored/);
    expect(readManifest(out).realms).toEqual({ source: 'GET /api/realms', ids: ['libvirt'] });
  });

  it('refuses http:// to a non-loopback host before any request', async () => {
    const out = join(tmpDir(), 'raw');
    const res = await runCli(['collect', '--base-url', 'http://platform.example.org', '--out-dir', out], {
      env: { SVC_TOKEN: TOKEN },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unencrypted/);
    expect(existsSync(out)).toBe(false);
  });

  it('leaves an older output directory intact and nothing else behind on SIGINT', async () => {
    const s = await start();
    s.backend.setFault('drives', { delayMs: 20_000 });
    const parent = tmpDir();
    const out = join(parent, 'raw');
    mkdirSync(out);
    // An earlier collection: the only kind of directory collect may replace.
    writeFileSync(
      join(out, '_collection-manifest.json'),
      JSON.stringify({
        kind: 'collection',
        tool: { name: 'svc-snapshot', version: '0.0.0' },
        routes: [{ route: 'GET /api/users', file: 'yesterday.json' }],
      }),
    );
    writeFileSync(join(out, 'yesterday.json'), '[]');
    const { child, result } = startCli(['collect', '--base-url', s.url, '--ca-file', s.caFile, '--out-dir', out], {
      env: { SVC_TOKEN: TOKEN },
    });
    // Wait until the run is under way (some routes done, drives hanging).
    await stderrSeen(child, 'GET /api/users');
    child.kill('SIGINT');
    const res = await result;
    expect(res.code).toBe(130);
    expect(readdirSync(parent)).toEqual(['raw']);
    expect(readdirSync(out).sort()).toEqual(['_collection-manifest.json', 'yesterday.json']);
    expect(leftovers(parent)).toEqual([]);
    expectNoSecrets(ALL_SECRETS, [parent], [res.stdout, res.stderr]);
  });
});
