import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { startFakeSite, type FakeSite, type FakeSiteOptions } from '../helpers/fake-site.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets, listFiles } from '../helpers/assert-output.js';
import { getTestCerts, getUntrustedCerts } from '../fake/certs.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const SECRETS = [TOKEN, 'fake-token-no-vm', 'fake-token-user-only', 'fake-token-vm-only'];

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

async function check(s: { url: string; caFile: string }, env: Record<string, string>, extra: string[] = []) {
  const cwd = tmpDir();
  const res = await runCli(['check', '--base-url', s.url, '--ca-file', s.caFile, '--json', ...extra], { env, cwd });
  expectNoSecrets(SECRETS, [], [res.stdout, res.stderr]);
  expect(listFiles(cwd)).toEqual([]); // check writes nothing
  return { ...res, report: res.stdout ? JSON.parse(res.stdout) : undefined };
}

describe('svc-snapshot check', () => {
  it('reports all good on a 3.14.1 backend with one token', async () => {
    site = await startFakeSite({
      realms: [
        { id: 'libvirt', driver: 'libvirt' },
        { id: 'alt', driver: 'altvirt' },
      ],
    } as FakeSiteOptions);
    const res = await check(site, { SVC_TOKEN: TOKEN });
    expect(res.code).toBe(0);
    expect(res.report).toEqual({
      reachable: true,
      tls: { used: true, ok: true },
      release: '3.14.1+',
      tokens: [
        {
          source: 'SVC_TOKEN',
          types: ['User', 'Team', 'Drive', 'VM', 'Project'],
          reaches: ['User', 'Team', 'Drive', 'VM', 'Project'],
          refused: [],
        },
      ],
      realms: { source: 'GET /api/realms', ids: ['libvirt', 'alt'] },
      ok: true,
    });
    expect(site.backend.requests.every((r) => r.method === 'GET' && !r.write)).toBe(true);
  });

  it('names the type a token does not reach and exits 3', async () => {
    site = await startFakeSite({
      tokens: [{ value: 'fake-token-no-vm', types: ['User', 'Team', 'Drive', 'Project'] }],
    } as FakeSiteOptions);
    const res = await check(site, { SVC_TOKEN: 'fake-token-no-vm' });
    expect(res.code).toBe(3);
    expect(res.report.tokens[0]).toMatchObject({
      source: 'SVC_TOKEN',
      reaches: ['User', 'Team', 'Drive', 'Project'],
      refused: ['VM'],
    });
    expect(res.report.ok).toBe(false);
  });

  it('recognises a 3.13.8 backend and checks per-type tokens', async () => {
    site = await startFakeSite({
      release: '3.13.8',
      tokens: [
        { value: 'fake-token-user-only', types: ['User'] },
        { value: 'fake-token-vm-only', types: ['VM'] },
      ],
    } as FakeSiteOptions);
    const res = await check(site, { SVC_TOKEN_USER: 'fake-token-user-only' }, [
      '--token-vm',
      'fake-token-vm-only',
      '--realms',
      'libvirt',
    ]);
    expect(res.code).toBe(0);
    expect(res.report.release).toBe('before 3.14.1');
    expect(res.report.tokens).toEqual([
      { source: 'SVC_TOKEN_USER', types: ['User'], reaches: ['User'], refused: [] },
      { source: '--token-vm', types: ['VM'], reaches: ['VM'], refused: [] },
    ]);
    expect(res.report.realms).toEqual({ source: '--realms', ids: ['libvirt'] });
  });

  it('reports an untrusted certificate and points at --ca-file', async () => {
    site = await startFakeSite({ certs: getUntrustedCerts() } as FakeSiteOptions);
    const res = await check({ url: site.url, caFile: getTestCerts().caFile }, { SVC_TOKEN: TOKEN });
    expect(res.code).toBe(1);
    expect(res.report.tls.ok).toBe(false);
    expect(res.report.tls.error).toMatch(/--ca-file/);
    expect(res.report.ok).toBe(false);
  });

  it('reports an unreachable host (a closed port on 127.0.0.1) with exit 1', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const res = await check({ url: `https://127.0.0.1:${port}`, caFile: getTestCerts().caFile }, { SVC_TOKEN: TOKEN }, [
      '--retries',
      '0',
    ]);
    expect(res.code).toBe(1);
    expect(res.report).toMatchObject({ reachable: false, ok: false });
    // No connection, no certificate seen: TLS is not checked, never verified.
    expect(res.report.tls).toEqual({ used: true, ok: null });
    const text = await runCli(
      ['check', '--base-url', `https://127.0.0.1:${port}`, '--ca-file', getTestCerts().caFile, '--retries', '0'],
      { env: { SVC_TOKEN: TOKEN } },
    );
    expect(text.stdout).toMatch(/^ {2}reachable: no$/m);
    expect(text.stdout).toMatch(/^ {2}TLS: not checked \(the host was not reached\)$/m);
    expect(text.stdout).not.toMatch(/verified/);
  });

  it('a login page answering 200 is not a route reached: exit 1, as the snapshot would end', async () => {
    site = await startFakeSite();
    for (const route of ['users-managed-objects', 'teams-usage', 'drives', 'realms', 'security-levels'])
      site.backend.setFault(route, { html200: true });
    const res = await check(site, { SVC_TOKEN: TOKEN });
    expect(res.code).toBe(1);
    expect(res.report.ok).toBe(false);
    expect(res.report.tokens[0].reaches).toEqual([]);
    expect(res.report.tokens[0].errors.join('\n')).toMatch(
      /GET \/api\/drives: expected JSON but received \d+ bytes of HTML or XML \(text\/html\)/,
    );
    const text = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile], {
      env: { SVC_TOKEN: TOKEN },
    });
    expect(text.stdout).not.toMatch(/^OK/m);
  });

  it('is a usage error without a token', async () => {
    site = await startFakeSite();
    const res = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile], { env: {} });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/no API token/);
    expect(site.backend.requests).toHaveLength(0);
  });
});
