import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect } from '../../src/collect/collect.js';
import { resolveConnection } from '../../src/config/settings.js';
import { readOptions } from '../../src/config/options.js';
import { HttpClient } from '../../src/http/client.js';
import { TokenRejectedError } from '../../src/errors.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { silentReporter } from '../../src/progress/reporter.js';
import {
  ALL_TYPES_TOKEN,
  PER_TYPE_TOKENS,
  createFakeBackend,
  perTypeTokenEnv,
  type FakeBackend,
} from '../fake/backend.js';
import type { FakeBackendOptions } from '../fake/backend.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

/**
 * The collector's entry point, collect(), called in the test process with an
 * HttpClient whose dispatcher answers from the fake's msw handlers. The
 * recordings were made by the binary's collector from this fake (seed 2026),
 * so they are the expected bodies and manifest.
 */

const BASE_URL = 'https://platform.example.org';
const NOW = () => new Date(2026, 10, 21, 12, 0, 0);

function site(opts: Omit<FakeBackendOptions, 'baseUrl'> = {}): FakeBackend {
  return createFakeBackend({ seed: 2026, ...opts, baseUrl: BASE_URL });
}

async function collectFrom(backend: FakeBackend, env: NodeJS.ProcessEnv, flags: Record<string, unknown> = {}) {
  const settings = resolveConnection(readOptions('collect', { baseUrl: BASE_URL, ...flags }, env), env);
  const dispatcher = new MswDispatcher(backend.handlers);
  // backoffBaseMs: retries are counted, not waited for.
  const http = new HttpClient(
    { ...settings, userAgent: 'svc-snapshot-test', backoffBaseMs: 1, backoffMaxMs: 2 },
    dispatcher,
  );
  try {
    // No body here is large: a spool that is never written to.
    const spool = { write: () => Promise.reject(new Error('no body of this site is spooled')) };
    return await collect(settings, { http, reporter: silentReporter, abort: new AbortController(), now: NOW, spool });
  } finally {
    await http.close();
  }
}

/** A collection manifest without what changes from run to run (time, durations). */
function stable(manifest: unknown) {
  const m = JSON.parse(JSON.stringify(manifest));
  delete m.time;
  for (const r of m.routes) if (r.durationMs !== undefined) r.durationMs = 0;
  return m;
}

function expectRecording(name: string, result: Awaited<ReturnType<typeof collectFrom>>) {
  const dir = join(REPO_ROOT, 'recordings', name);
  const recorded = JSON.parse(readFileSync(join(dir, '_collection-manifest.json'), 'utf8'));
  expect(stable(result.collection.manifest)).toEqual(stable(recorded));
  const files = recorded.routes.filter((r: { file: string | null }) => r.file !== null);
  expect(result.collection.bodies.size).toBe(files.length);
  for (const r of files as Array<{ route: string; file: string }>) {
    const body = result.collection.bodies.get(r.route);
    // A live collection keeps every body as the bytes received (only a replay leaves large ones on disk).
    expect(Buffer.isBuffer(body) && body.equals(readFileSync(join(dir, r.file))), r.route).toBe(true);
  }
}

describe('collect() in-process against the msw handlers', () => {
  it('collects a 3.14.1 backend with one token: the recording, body for body', async () => {
    const backend = site({
      release: '3.14.1',
      realms: [
        { id: 'libvirt', driver: 'libvirt' },
        { id: 'altvirt', driver: 'altvirt' },
      ],
    });
    const result = await collectFrom(backend, { SVC_TOKEN: ALL_TYPES_TOKEN.value });
    expect(result.failed).toEqual([]);
    expectRecording('platform-3.14.1', result);
  });

  it('collects a 3.13.8 backend with per-type tokens, skipping the 3.14.1 routes: the recording, body for body', async () => {
    const backend = site({ release: '3.13.8', tokens: PER_TYPE_TOKENS });
    const result = await collectFrom(backend, perTypeTokenEnv(), { realms: 'libvirt' });
    expect(result.failed).toEqual([]);
    expectRecording('platform-3.13.8', result);
  });

  it('stops on a 401 with a TokenRejectedError that maps to exit 3 and names the token source', async () => {
    const backend = site();
    const err = await collectFrom(backend, { SVC_TOKEN: 'fake-token-unknown' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect((err as Error).message).toMatch(
      /^401 on GET \/api\/realms: the token \(from SVC_TOKEN\) was refused: the server does not accept the token itself/,
    );
    expect((err as Error).message).not.toMatch(/needs type|--token-vm/);
    expect((err as Error).message).not.toContain('fake-token-unknown');
    expect(exitCodeOf(err as TokenRejectedError)).toBe(3);
    // Realms come first, so nothing after the refusal was asked.
    expect(backend.requests).toHaveLength(1);
  });

  it('names the type a token lacks on a 403', async () => {
    const backend = site({ tokens: [{ value: 'fake-token-without-vm', types: ['User', 'Team', 'Drive', 'Project'] }] });
    const err = await collectFrom(backend, { SVC_TOKEN: 'fake-token-without-vm' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect((err as Error).message).toMatch(/^403 on GET \/api\/realms: the VM token .*--token-vm or SVC_TOKEN_VM/);
  });

  // Retry-After itself is checked by order of arrival in test/unit/http-client.test.ts.
  it('recovers from transient 500, 503 and 429 answers, counting the attempts', async () => {
    const backend = site();
    backend.setFault('users', { statuses: [500, 503] });
    backend.setFault('drives', { statuses: [429] });
    const result = await collectFrom(backend, { SVC_TOKEN: ALL_TYPES_TOKEN.value });
    expect(result.failed).toEqual([]);
    const routes = result.collection.manifest.routes;
    expect(routes.find((r) => r.route === 'GET /api/users')).toMatchObject({ status: 200, attempts: 3 });
    expect(routes.find((r) => r.route === 'GET /api/drives')).toMatchObject({ status: 200, attempts: 2 });
    expect(result.collection.bodies.get('GET /api/users')!.toString()).toBe(backend.responseBody('users'));
  });

  it('records a persistent 500 as a failed route and collects the rest', async () => {
    const backend = site();
    backend.setFault('teams', { statuses: [500], always: true });
    const result = await collectFrom(backend, { SVC_TOKEN: ALL_TYPES_TOKEN.value }, { retries: '2' });
    expect(result.failed.map((r) => r.route)).toEqual(['GET /api/teams']);
    expect(result.failed[0]).toMatchObject({ status: 500, file: null, attempts: 3 });
    expect(result.failed[0]!.error).toMatch(/HTTP 500 after 3 attempts/);
    expect(backend.requests.filter((r) => r.route === 'teams')).toHaveLength(3);
    expect(result.collection.bodies.has('GET /api/teams')).toBe(false);
    expect(result.collection.bodies.get('GET /api/users')!.toString()).toBe(backend.responseBody('users'));
  });

  it.each([
    [
      'an HTML login page with status 200',
      { html200: true } as const,
      /expected JSON but received \d+ bytes of HTML.*text\/html/,
    ],
    ['a body that is not JSON', { malformed: true } as const, /do not parse/],
  ])('fails a route that answers %s, naming what arrived', async (_what, fault, message) => {
    const backend = site();
    backend.setFault('projects', fault);
    const result = await collectFrom(backend, { SVC_TOKEN: ALL_TYPES_TOKEN.value });
    expect(result.failed.map((r) => r.route)).toEqual(['GET /api/projects']);
    expect(result.failed[0]).toMatchObject({ status: 200, file: null });
    expect(result.failed[0]!.error).toMatch(message);
  });

  it('retries a body cut off mid-way and records the route failed when it stays cut off', async () => {
    const backend = site();
    backend.setFault('drives', { truncate: true });
    const result = await collectFrom(backend, { SVC_TOKEN: ALL_TYPES_TOKEN.value }, { retries: '1' });
    expect(result.failed.map((r) => r.route)).toEqual(['GET /api/drives']);
    expect(result.failed[0]).toMatchObject({ status: null, attempts: 2 });
    expect(result.failed[0]!.error).toMatch(/closed|truncated/);
  });
});
