import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RequestHandler } from 'msw';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditManifest } from '../../src/audit/collect.js';
import { AuditSummary } from '../../src/summaries/schemas.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN, type AuditBackend } from '../fake/audit-backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';

// svc-snapshot audit --objects: the built binary against the fake audit service over HTTPS on 127.0.0.1.
const handlers: RequestHandler[] = [];
let server: FakeServer;
let backend: AuditBackend;
const caFile = getTestCerts().caFile;

beforeAll(async () => {
  server = await startFakeServer(handlers, { tls: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  backend = createAuditBackend();
  handlers.splice(0, handlers.length, ...backend.handlers);
});

async function audit(args: string[]) {
  const parent = tmpDir('svc-snapshot-objects-e2e-');
  const out = path.join(parent, 'out');
  const result = await runCli(
    [
      'audit',
      '--audit-url',
      server.url,
      '--ca-file',
      caFile,
      '--out-dir',
      out,
      '--retries',
      '0',
      '--to',
      '2026-11-30',
      ...args,
    ],
    {
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
      cwd: parent,
    },
  );
  expect(result.stdout + result.stderr).not.toContain(FAKE_AUDIT_TOKEN);
  return { result, parent, out };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const objectRequests = () => backend.requests.filter((r) => r.path.startsWith('/objects/'));

describe('svc-snapshot audit --objects', () => {
  it('posts the ids (or [] for all), writes each answer byte for byte and records ids, status, bytes and sha256', async () => {
    const run = await audit(['--objects', 'user:alice,bob,alice', '--objects', 'vm', '--json']);
    expect(run.result.code).toBe(0);
    expect(objectRequests().map((r) => [r.method, r.path, r.body, r.token])).toEqual(
      expect.arrayContaining([
        ['POST', '/objects/user/2026-11-30', ['alice', 'bob'], 'valid'],
        ['POST', '/objects/vm/2026-11-30', [], 'valid'],
      ]),
    );
    const m = JSON.parse(await readFile(path.join(run.out, '_audit-manifest.json'), 'utf8')) as AuditManifest;
    expect(m.objects.map((o) => [o.type, o.ids, o.file, o.status, o.count])).toEqual([
      ['user', ['alice', 'bob'], 'objects-user-2026-11-30.json', 200, 2],
      ['vm', [], 'objects-vm-2026-11-30.json', 200, backend.dataset.objects.vm!.length],
    ]);
    for (const o of m.objects) {
      const bytes = await readFile(path.join(run.out, o.file));
      expect(o.bytes).toBe(bytes.length);
      expect(o.sha256).toBe(sha256(bytes));
      const route = m.routes.find((r) => r.file === o.file)!;
      expect(route).toMatchObject({
        route: `POST /objects/${o.type}/2026-11-30`,
        status: 200,
        bytes: o.bytes,
        sha256: o.sha256,
      });
      // Byte for byte: the fake answers with JSON.stringify of the objects, so the file is exactly that text.
      const expected =
        o.type === 'vm'
          ? backend.dataset.objects.vm
          : backend.dataset.objects.user!.filter((u) => ['alice', 'bob'].includes(u.id as string));
      expect(bytes.toString('utf8')).toBe(JSON.stringify(expected));
    }
    const summary = AuditSummary.parse(JSON.parse(run.result.stdout));
    expect(summary.objects.map((o) => [o.type, o.ids, o.count])).toEqual([
      ['user', ['alice', 'bob'], 2],
      ['vm', [], 4],
    ]);
  });

  it.each([
    ['../../etc', 'a path'],
    ['..', 'a dot segment'],
    ['a/b', 'a separator'],
    ['%2e%2e', 'percent-encoding'],
    ['user\u001b[2J', 'a control character'],
    ['', 'nothing'],
    ['user:', 'an empty id list'],
    ['user:a,,b', 'an empty id'],
  ])('refuses the type or ids %j (%s) before any request, publishing nothing', async (value) => {
    const run = await audit(['--objects', value]);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toMatch(/--objects/);
    expect(run.result.stderr).not.toContain('\u001b');
    expect(backend.requests).toEqual([]);
    expect(existsSync(run.out)).toBe(false);
    expect(await readdir(run.parent)).toEqual([]);
  });

  it('refuses the same type twice, in any case, since both would write one file', async () => {
    const run = await audit(['--objects', 'user:alice', '--objects', 'User:bob']);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toMatch(/give each type once/);
    expect(backend.requests).toEqual([]);
  });

  it('fails (exit 1), naming the route, when the service does not support the type; nothing is published', async () => {
    const run = await audit(['--objects', 'spaceship']);
    expect(run.result.code).toBe(1);
    expect(run.result.stderr).toMatch(
      /POST \/objects\/spaceship\/2026-11-30: HTTP 400 \(bad request: check the object type and ids/,
    );
    expect(existsSync(run.out)).toBe(false);
  });

  it('is not touched by check --audit, which posts nothing', async () => {
    const res = await runCli(['check', '--audit', '--audit-url', server.url, '--ca-file', caFile, '--json'], {
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
    });
    expect(res.code).toBe(0);
    expect(backend.requests.every((r) => r.method === 'GET')).toBe(true);
  });
});
