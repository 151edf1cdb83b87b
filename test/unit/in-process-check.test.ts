import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { runCheck } from '../../src/commands/check.js';

type CheckFlags = Record<string, unknown>;
import { ALL_TYPES_TOKEN, createFakeBackend, type FakeBackend, type FakeBackendOptions } from '../fake/backend.js';
import { inProcess } from '../helpers/in-process.js';
import { tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets } from '../helpers/assert-output.js';

/**
 * runCheck called in the test process against the fake's msw handlers. No
 * socket is opened, so the verdicts here are over http:// to a loopback host
 * (TLS not used); the TLS verdicts are end-to-end (test/e2e/check.test.ts).
 */

const LOOPBACK = 'http://127.0.0.1:9';
const TOKEN = ALL_TYPES_TOKEN.value;
const SECRETS = [TOKEN, 'fake-token-no-vm', 'fake-token-user-only', 'fake-token-vm-only', 'fake-token-unknown'];

function site(opts: Omit<FakeBackendOptions, 'baseUrl'> = {}, baseUrl = LOOPBACK): FakeBackend {
  return createFakeBackend({ ...opts, baseUrl });
}

async function check(backend: FakeBackend, env: NodeJS.ProcessEnv, flags: CheckFlags = {}, baseUrl = LOOPBACK) {
  const cwd = tmpDir();
  const run = inProcess(backend.handlers, { env, cwd });
  const { exitCode } = await runCheck({ baseUrl, json: true, retries: '0', ...flags }, run.deps);
  expectNoSecrets(SECRETS, [], [run.stdout(), run.stderr()]);
  // check writes nothing.
  expect(readdirSync(cwd)).toEqual([]);
  expect(backend.requests.every((r) => r.method === 'GET' && !r.write)).toBe(true);
  return { exitCode, report: JSON.parse(run.stdout()) };
}

describe('runCheck in-process against the msw handlers', () => {
  it('says all good on a 3.14.1 backend with one token, with the realms it lists (exit 0)', async () => {
    const backend = site({
      realms: [
        { id: 'libvirt', driver: 'libvirt' },
        { id: 'alt', driver: 'altvirt' },
      ],
    });
    const { exitCode, report } = await check(backend, { SVC_TOKEN: TOKEN });
    expect(exitCode).toBe(0);
    expect(report).toEqual({
      reachable: true,
      // http:// to a loopback host: TLS not used, so no verdict (the text says "not used" too).
      tls: { used: false, ok: null },
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
    // One probe per type, each answered by the handlers.
    expect(backend.requests.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('names the type a token does not reach (exit 3)', async () => {
    const backend = site({ tokens: [{ value: 'fake-token-no-vm', types: ['User', 'Team', 'Drive', 'Project'] }] });
    const { exitCode, report } = await check(backend, { SVC_TOKEN: 'fake-token-no-vm' });
    expect(exitCode).toBe(3);
    expect(report.tokens).toEqual([
      {
        source: 'SVC_TOKEN',
        types: ['User', 'Team', 'Drive', 'VM', 'Project'],
        reaches: ['User', 'Team', 'Drive', 'Project'],
        refused: ['VM'],
        refusedWith: [{ type: 'VM', status: 403 }],
      },
    ]);
    expect(report.ok).toBe(false);
  });

  it('refuses a token the backend does not know for every type (exit 3)', async () => {
    const { exitCode, report } = await check(site(), { SVC_TOKEN: 'fake-token-unknown' });
    expect(exitCode).toBe(3);
    expect(report.tokens[0]).toMatchObject({ reaches: [], refused: ['User', 'Team', 'Drive', 'VM', 'Project'] });
    expect(report.tokens[0].refusedWith.map((r: { status: number }) => r.status)).toEqual([401, 401, 401, 401, 401]);
  });

  it('says in its text output which status refused each type: 401 the token itself, 403 its type', async () => {
    const backend = site({ tokens: [{ value: 'fake-token-no-vm', types: ['User', 'Team', 'Drive', 'Project'] }] });
    const run = inProcess(backend.handlers, { env: { SVC_TOKEN: 'fake-token-no-vm' }, cwd: tmpDir() });
    expect((await runCheck({ baseUrl: LOOPBACK, retries: '0' }, run.deps)).exitCode).toBe(3);
    expect(run.stdout()).toContain(
      'token from SVC_TOKEN: reaches User, Team, Drive, Project; REFUSED for VM (403: type not granted)\n',
    );
    expect(run.stdout()).toContain('  TLS: not used (http:// to a loopback host)\n');
    const unknown = inProcess(site().handlers, { env: { SVC_TOKEN: 'fake-token-unknown' }, cwd: tmpDir() });
    expect((await runCheck({ baseUrl: LOOPBACK, retries: '0' }, unknown.deps)).exitCode).toBe(3);
    expect(unknown.stdout()).toContain('REFUSED for User (401: the token itself is not accepted), Team (401');
  });

  it('recognises a 3.13.8 backend, falls back to the older probe routes, and checks per-type tokens (exit 0)', async () => {
    const backend = site({
      release: '3.13.8',
      tokens: [
        { value: 'fake-token-user-only', types: ['User'] },
        { value: 'fake-token-vm-only', types: ['VM'] },
      ],
    });
    const { exitCode, report } = await check(
      backend,
      { SVC_TOKEN_USER: 'fake-token-user-only' },
      { tokenVm: 'fake-token-vm-only', realms: 'libvirt' },
    );
    expect(exitCode).toBe(0);
    expect(report.release).toBe('before 3.14.1');
    expect(report.tokens).toEqual([
      { source: 'SVC_TOKEN_USER', types: ['User'], reaches: ['User'], refused: [] },
      { source: '--token-vm', types: ['VM'], reaches: ['VM'], refused: [] },
    ]);
    expect(report.realms).toEqual({ source: '--realms', ids: ['libvirt'] });
    // The newer probe answered 404, then the older one 200.
    expect(backend.requests.map((r) => r.status)).toEqual([404, 200, 404, 200]);
  });

  it('reports a probe that fails with a 500 as an error, not a refusal (exit 1)', async () => {
    const backend = site();
    backend.setFault('drives', { statuses: [500], always: true });
    const { exitCode, report } = await check(backend, { SVC_TOKEN: TOKEN });
    expect(exitCode).toBe(1);
    expect(report.tokens[0].refused).toEqual([]);
    expect(report.tokens[0].reaches).toEqual(['User', 'Team', 'VM', 'Project']);
    expect(report.tokens[0].errors.join('\n')).toMatch(/GET \/api\/drives: HTTP 500/);
  });

  it('never calls an https:// URL verified without a verified TLS socket to it (exit 1)', async () => {
    // The in-process dispatcher opens no socket: the answers alone must not make TLS "verified".
    const url = 'https://platform.example.org';
    const { exitCode, report } = await check(site({}, url), { SVC_TOKEN: TOKEN }, {}, url);
    expect(exitCode).toBe(1);
    expect(report.tls).toEqual({ used: true, ok: false, error: 'no verified TLS connection was made' });
    expect(report.ok).toBe(false);
  });
});
