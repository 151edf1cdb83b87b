import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { http, HttpResponse } from 'msw';
import { createAuditBackend, FAKE_AUDIT_TOKEN, WRONG_FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { getTestCerts } from '../fake/certs.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets, listFiles } from '../helpers/assert-output.js';

let server: FakeServer;
const backend = createAuditBackend();
beforeAll(async () => {
  server = await startFakeServer(backend.handlers, { tls: true });
});
afterAll(async () => server.close());

async function checkAudit(token: string) {
  const cwd = tmpDir();
  const res = await runCli(
    ['check', '--audit', '--audit-url', server.url, '--ca-file', getTestCerts().caFile, '--json'],
    { env: { SVC_AUDIT_TOKEN: token }, cwd },
  );
  expectNoSecrets([FAKE_AUDIT_TOKEN, WRONG_FAKE_AUDIT_TOKEN], [], [res.stdout, res.stderr]);
  expect(listFiles(cwd)).toEqual([]);
  return { ...res, report: JSON.parse(res.stdout) };
}

describe('svc-snapshot check --audit', () => {
  it('reports the service version and an accepted token', async () => {
    const res = await checkAudit(FAKE_AUDIT_TOKEN);
    expect(res.code).toBe(0);
    expect(res.report).toMatchObject({
      reachable: true,
      tls: { ok: true },
      token: { source: 'SVC_AUDIT_TOKEN', accepted: true, status: 200 },
      ok: true,
    });
    expect(res.report.service.version).toEqual(expect.any(String));
  });

  it('reports TLS as not checked, never verified, when the service is not reached (a closed port)', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const args = ['check', '--audit', '--audit-url', `https://127.0.0.1:${port}`, '--ca-file', getTestCerts().caFile];
    const env = { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN };
    const json = await runCli([...args, '--json', '--retries', '0'], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ reachable: false, tls: { used: true, ok: null }, ok: false });
    const text = await runCli([...args, '--retries', '0'], { env });
    expect(text.stdout).toMatch(/^ {2}TLS: not checked \(the host was not reached\)$/m);
    expect(text.stdout).not.toMatch(/verified/);
  });

  it('reports a refused token with exit 3', async () => {
    const res = await checkAudit(WRONG_FAKE_AUDIT_TOKEN);
    expect(res.code).toBe(3);
    expect(res.report).toMatchObject({ token: { accepted: false, status: 401 }, ok: false });
  });
});

describe('a login page in place of the audit service', () => {
  it('answering 200 says nothing of the token: not known, exit 1, never "OK"', async () => {
    const page = http.get('*/queries/list', () =>
      HttpResponse.text('<!DOCTYPE html><html><body>Sign in</body></html>', {
        headers: { 'content-type': 'text/html' },
      }),
    );
    const s = await startFakeServer([page, ...createAuditBackend().handlers], { tls: true });
    try {
      const args = ['check', '--audit', '--audit-url', s.url, '--ca-file', getTestCerts().caFile];
      const json = await runCli([...args, '--json'], { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, cwd: tmpDir() });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        token: { accepted: null, status: 200, error: expect.stringMatching(/bytes of HTML or XML; a login page/) },
        ok: false,
      });
      const text = await runCli(args, { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, cwd: tmpDir() });
      expect(text.stdout).toMatch(/token from SVC_AUDIT_TOKEN: not known: GET \/queries\/list answered 200/);
      expect(text.stdout).not.toMatch(/^OK/m);
    } finally {
      await s.close();
    }
  });
});

describe("the audit service's own words", () => {
  it('a newline in its name or version is escaped: it cannot add an "OK" line to the verdict', async () => {
    const hostile = createAuditBackend();
    hostile.dataset.info.name = 'Audit\nOK: an audit collection would run.\n';
    hostile.dataset.info.version = '4.2\r\nOK';
    const s = await startFakeServer(hostile.handlers, { tls: true });
    try {
      const res = await runCli(['check', '--audit', '--audit-url', s.url, '--ca-file', getTestCerts().caFile], {
        env: { SVC_AUDIT_TOKEN: WRONG_FAKE_AUDIT_TOKEN },
        cwd: tmpDir(),
      });
      expect(res.code).toBe(3);
      expect(res.stdout).toContain(
        'service: Audit\\u000aOK: an audit collection would run.\\u000a 4.2\\u000d\\u000aOK',
      );
      expect(res.stdout.split('\n').filter((l) => l.startsWith('OK'))).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
