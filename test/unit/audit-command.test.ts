import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { RequestHandler } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/commands/audit.js';
type AuditFlags = Record<string, unknown>;
import type { AuditManifest } from '../../src/audit/collect.js';
import type { AuditSummary } from '../../src/audit/summary.js';
import { TokenRejectedError, UsageError, FailedError } from '../../src/errors.js';
import { silentReporter } from '../../src/progress/reporter.js';
import { cleanupAllSync } from '../../src/publish/index.js';
import {
  createAuditBackend,
  FAKE_AUDIT_TOKEN,
  WRONG_FAKE_AUDIT_TOKEN,
  type AuditBackend,
  type AuditBackendOptions,
} from '../fake/audit-backend.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';

// The command in-process against the fake audit service over loopback http
// (allowed for 127.0.0.1); test/e2e/audit.test.ts runs the binary over HTTPS.
const handlers: RequestHandler[] = [];
let server: FakeServer;
let backend: AuditBackend;
let work: string;

function useBackend(opts: AuditBackendOptions = {}): AuditBackend {
  backend = createAuditBackend(opts);
  handlers.splice(0, handlers.length, ...backend.handlers);
  return backend;
}

beforeAll(async () => {
  server = await startFakeServer(handlers, { tls: false });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  useBackend();
  work = await mkdtemp(path.join(os.tmpdir(), 'audit-command-'));
});
afterEach(async () => {
  cleanupAllSync();
  await rm(work, { recursive: true, force: true });
});

const NOW = new Date(2026, 10, 21, 2, 0, 0);

async function run(flags: AuditFlags, env: Record<string, string> = { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }) {
  let out = '';
  const result = await runAudit(
    { auditUrl: server.url, outDir: path.join(work, 'out'), retries: '0', ...flags },
    { env, cwd: work, stdout: (t) => (out += t), reporter: silentReporter, now: () => NOW },
  );
  return { result, out, dir: path.join(work, 'out') };
}

async function failure(flags: AuditFlags, env?: Record<string, string>): Promise<Error> {
  const err = await run(flags, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

async function manifestOf(dir: string): Promise<AuditManifest> {
  return JSON.parse(await readFile(path.join(dir, '_audit-manifest.json'), 'utf8')) as AuditManifest;
}

describe('svc-snapshot audit, in process', () => {
  it('collects every capability list and the alerts of the default period, and writes a manifest', async () => {
    const { result, out, dir } = await run({ json: true });
    expect(result.exitCode).toBe(0);
    expect((await readdir(dir)).sort()).toEqual([
      '_audit-manifest.json',
      'alerts-1970-01-01-2037-12-31.json',
      'alerts-list.json',
      'info.json',
      'queries-list.json',
      'queries-params.json',
      'reports-list.json',
      'tags-list.json',
    ]);
    const manifest = await manifestOf(dir);
    expect(manifest).toMatchObject({
      kind: 'audit',
      auditUrl: server.url,
      service: { version: '4.2.0-fake' },
      date: '2026-11-21',
      from: '1970-01-01',
      to: '2037-12-31',
    });
    expect(manifest.routes.map((r) => r.route)).toEqual([
      'GET /info',
      'GET /queries/params',
      'GET /tags/list',
      'GET /queries/list',
      'GET /reports/list',
      'GET /alerts/list',
      'GET /alerts/1970-01-01/2037-12-31',
    ]);
    for (const r of manifest.routes) {
      const bytes = await readFile(path.join(dir, r.file));
      expect(r.bytes).toBe(bytes.length);
      expect(r.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    // /info is called first and without the token; the rest with it.
    expect(backend.requests[0]).toMatchObject({ path: '/info', token: 'none' });
    expect(backend.requests.slice(1).every((r) => r.token === 'valid')).toBe(true);
    const summary = JSON.parse(out) as AuditSummary;
    expect(summary.alerts.total).toBe(13);
    expect(summary.alerts.bySeverity).toEqual({ critical: 1, high: 2, medium: 4, low: 2, info: 3, unknown: 1 });
    expect(summary.alerts.byType[0]).toEqual({
      type: 'login-failed',
      name: 'Failed login',
      severity: 'medium',
      count: 4,
    });
  });

  it('runs a query with its defaults and --param overrides, and keys rows by returnNames', async () => {
    const { dir } = await run({
      from: '2026-10-01',
      to: '2026-11-30',
      query: ['logins', 'vm-usage'],
      param: ['user=alice', 'includeSystem=yes'],
    });
    const logins = JSON.parse(await readFile(path.join(dir, 'queries-logins-2026-11-30.json'), 'utf8'));
    expect(logins.params).toEqual({ startDate: '2026-10-01', endDate: '2026-11-30', user: 'alice', limit: 100 });
    expect(logins.records[0]).toEqual({ date: '2026-10-01', user: 'alice', logins: 4 });
    expect(logins.rows.length).toBe(logins.records.length);
    const vm = JSON.parse(await readFile(path.join(dir, 'queries-vm-usage-2026-11-30.json'), 'utf8'));
    expect(vm.params).toMatchObject({ includeSystem: true, minHours: 0.5 });
    expect(vm.records.map((r: { vm: string }) => r.vm)).toEqual(['vm-01', 'vm-02', 'vm-04']);
    const manifest = await manifestOf(dir);
    const q = manifest.routes.find((r) => r.route === 'POST /queries/logins/2026-11-30')!;
    expect(q.responseSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.queries[0]!.paramSources).toEqual({
      startDate: '--from',
      endDate: '--to',
      user: '--param',
      limit: 'default',
    });
  });

  it('downloads a report with and without an object id as spreadsheets', async () => {
    const { dir } = await run({ report: ['monthly-access', 'user-activity:alice'] });
    const a = await readFile(path.join(dir, 'reports-monthly-access-1970-01-01-2037-12-31.xlsx'));
    const b = await readFile(path.join(dir, 'reports-user-activity-1970-01-01-2037-12-31-alice.xlsx'));
    expect(a.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
    expect(b.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
  });

  it('makes object ids file-safe in names', async () => {
    const { dir } = await run({ report: ['user-activity:../x/y'] });
    expect(await readdir(dir)).toContain('reports-user-activity-1970-01-01-2037-12-31-%2E%2E%2Fx%2Fy.xlsx');
  });

  it('refuses a malformed token before any request, without echoing it', async () => {
    const err = await failure({}, { SVC_AUDIT_TOKEN: 'not-a-real-token' });
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('SVC_AUDIT_TOKEN');
    expect(err.message).not.toContain('not-a-real-token');
    expect(backend.requests).toEqual([]);
  });

  it('stops with TokenRejectedError on 401 and publishes nothing', async () => {
    const err = await failure({}, { SVC_AUDIT_TOKEN: WRONG_FAKE_AUDIT_TOKEN });
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect(err.message).toMatch(/^401 on GET \//);
    expect(await readdir(work)).toEqual([]);
  });

  it('names the listed ids for an unknown query or report', async () => {
    const q = await failure({ query: ['nope'] });
    expect(q).toBeInstanceOf(UsageError);
    expect(q.message).toContain('logins, vm-usage, top-alerts');
    const r = await failure({ report: ['nope'] });
    expect(r.message).toContain('monthly-access, user-activity, vm-inventory');
    expect(await readdir(work)).toEqual([]);
  });

  it('asks for the object parameter of a report built for one object', async () => {
    const err = await failure({ report: ['user-activity'] });
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('userId');
  });

  it('rejects an unknown --param naming the valid ones, and a value of the wrong type', async () => {
    const err = await failure({ query: ['logins'], param: ['colour=red'] });
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('limit, user');
    const bad = await failure({ query: ['logins'], param: ['limit=many'] });
    expect(bad).toBeInstanceOf(UsageError);
    expect(bad.message).toContain('whole number');
  });

  it('fails when a report answers JSON instead of a spreadsheet', async () => {
    useBackend({ faults: { reportAsJson: ['vm-inventory'] } });
    const err = await failure({ report: ['vm-inventory'] });
    expect(err).toBeInstanceOf(FailedError);
    expect(err.message).toContain('GET /reports/vm-inventory/1970-01-01/2037-12-31');
    expect(err.message).toContain('JSON');
    expect(err.message).toContain('report engine unavailable');
    expect(await readdir(work)).toEqual([]);
  });

  it('fails naming the route when a list answers an HTML page instead of JSON', async () => {
    useBackend({ faults: { htmlLoginPage: ['tags-list'] } });
    const err = await failure({});
    expect(err).toBeInstanceOf(FailedError);
    expect(err.message).toMatch(
      /^GET \/tags\/list: expected JSON but received \d+ bytes of HTML or XML \(text\/html\)/,
    );
    expect(await readdir(work)).toEqual([]);
  });

  it('retries a 5xx and then fails with the status, publishing nothing', async () => {
    useBackend({ faults: { status: { alerts: 503 } } });
    const err = await failure({ retries: '1' });
    expect(err).toBeInstanceOf(FailedError);
    expect(err.message).toContain('GET /alerts/1970-01-01/2037-12-31: HTTP 503 after 2 attempts');
    expect(backend.requests.filter((r) => r.path.startsWith('/alerts/1970')).length).toBe(2);
    expect(await readdir(work)).toEqual([]);
  });

  it('treats a 401 on /info, which needs no token, as a failure rather than a refused token', async () => {
    useBackend({ faults: { status: { info: 401 } } });
    const err = await failure({});
    expect(err).toBeInstanceOf(FailedError);
    expect(err.message).toContain('GET /info: HTTP 401, although this route needs no authentication');
  });

  it('reports validation issues of records by route, index and path, never values', async () => {
    const b = createAuditBackend();
    (b.dataset.alerts[0] as { timestamp: unknown }).timestamp = 'secret-looking-value';
    useBackend({ dataset: b.dataset });
    const { dir, out } = await run({ json: true });
    const manifest = await manifestOf(dir);
    expect(manifest.validation.issues).toBe(1);
    expect(manifest.validation.samples[0]).toMatchObject({
      route: 'GET /alerts/1970-01-01/2037-12-31',
      index: 0,
      path: 'timestamp',
    });
    expect(JSON.stringify(manifest.validation)).not.toContain('secret-looking-value');
    expect((JSON.parse(out) as AuditSummary).validationIssues).toBe(1);
  });
});
