import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { RequestHandler } from 'msw';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditManifest } from '../../src/audit/collect.js';
import type { AuditSummary } from '../../src/audit/summary.js';
import {
  createAuditBackend,
  FAKE_AUDIT_TOKEN,
  WRONG_FAKE_AUDIT_TOKEN,
  type AuditBackend,
  type AuditBackendOptions,
} from '../fake/audit-backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { runCli, tmpDir, type CliResult } from '../helpers/run-cli.js';
import { ageDecrypt, makeIdentity, untar } from '../helpers/age-keys.js';

// The built binary (npm run build) against the fake audit service over real
// HTTPS on 127.0.0.1, trusting the test CA through --ca-file.
const handlers: RequestHandler[] = [];
let server: FakeServer;
let backend: AuditBackend;
const caFile = getTestCerts().caFile;

function useBackend(opts: AuditBackendOptions = {}): void {
  backend = createAuditBackend(opts);
  handlers.splice(0, handlers.length, ...backend.handlers);
}

beforeAll(async () => {
  server = await startFakeServer(handlers, { tls: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => useBackend());

interface Run {
  result: CliResult;
  parent: string;
  out: string;
}

async function audit(
  args: string[],
  env: Record<string, string | undefined> = { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
): Promise<Run> {
  const parent = tmpDir('svc-snapshot-audit-e2e-');
  const out = path.join(parent, 'out');
  const result = await runCli(
    ['audit', '--audit-url', server.url, '--ca-file', caFile, '--out-dir', out, '--retries', '0', ...args],
    { env, cwd: parent },
  );
  return { result, parent, out };
}

const ALL_TOKENS = [FAKE_AUDIT_TOKEN, WRONG_FAKE_AUDIT_TOKEN];

/** No token value in stdout, stderr, or any file name or content under `parent`. */
async function expectNoTokenAnywhere(run: Run, tokens: readonly string[] = ALL_TOKENS): Promise<void> {
  for (const token of tokens) {
    expect(run.result.stdout).not.toContain(token);
    expect(run.result.stderr).not.toContain(token);
  }
  const files = (await readdir(run.parent, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  for (const f of files) {
    const full = path.join(f.parentPath, f.name);
    const bytes = await readFile(full);
    for (const token of tokens) {
      expect(full).not.toContain(token);
      expect(bytes.includes(Buffer.from(token))).toBe(false);
    }
  }
}

/** Nothing was published, and no staging directory was left beside the target. */
async function expectNothingPublished(run: Run): Promise<void> {
  expect(existsSync(run.out)).toBe(false);
  expect(await readdir(run.parent)).toEqual([]);
}

async function manifest(run: Run): Promise<AuditManifest> {
  return JSON.parse(await readFile(path.join(run.out, '_audit-manifest.json'), 'utf8')) as AuditManifest;
}

describe('svc-snapshot audit (end to end)', () => {
  it('--encrypt-to: an age archive of the collection beside it, token-free, as age and tar give it back', async () => {
    const keys = tmpDir('svc-snapshot-audit-keys-');
    const key = makeIdentity(keys, 'auditor.txt');
    const run = await audit(['--encrypt-to', key.recipient, '--quiet']);
    expect(run.result.code, run.result.stderr).toBe(0);
    const archive = `${run.out}.tar.age`;
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    const tarBytes = ageDecrypt(key.file, archive);
    for (const t of ALL_TOKENS) expect(tarBytes.includes(Buffer.from(t))).toBe(false);
    const into = tmpDir('svc-snapshot-audit-extract-');
    untar(tarBytes, into);
    const extracted = path.join(into, path.basename(run.out));
    const names = (await readdir(run.out)).sort();
    expect((await readdir(extracted)).sort()).toEqual(names);
    for (const n of names)
      expect(await readFile(path.join(extracted, n))).toEqual(await readFile(path.join(run.out, n)));
    const verified = await runCli(['verify', archive, '--identity', key.file]);
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('collects the whole audit service with --json and never writes or prints the token', async () => {
    const run = await audit(['--json']);
    expect(run.result.stderr).toContain('ok      GET /info');
    expect(run.result.code).toBe(0);
    const files = (await readdir(run.out)).sort();
    expect(files).toEqual([
      '_audit-manifest.json',
      'alerts-1970-01-01-2037-12-31.json',
      'alerts-list.json',
      'info.json',
      'queries-list.json',
      'queries-params.json',
      'reports-list.json',
      'tags-list.json',
    ]);
    // Bodies byte for byte as the service sent them.
    expect(await readFile(path.join(run.out, 'alerts-list.json'), 'utf8')).toBe(
      JSON.stringify(backend.dataset.alertTypes),
    );
    expect(await readFile(path.join(run.out, 'info.json'), 'utf8')).toBe(JSON.stringify(backend.dataset.info));
    const m = await manifest(run);
    expect(m).toMatchObject({
      kind: 'audit',
      tool: { name: 'svc-snapshot' },
      auditUrl: server.url,
      service: { name: 'Fake Audit Service', version: '4.2.0-fake' },
    });
    expect(m.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(m.routes.every((r) => r.status === 200 && /^[0-9a-f]{64}$/.test(r.sha256))).toBe(true);
    expect(m.routes[0]).toMatchObject({ route: 'GET /info', auth: 'none' });
    expect(backend.requests[0]).toEqual({ method: 'GET', path: '/info', token: 'none' });

    const summary = JSON.parse(run.result.stdout) as AuditSummary;
    expect(summary).toMatchObject({ command: 'audit', outDir: run.out, files: 8 });
    expect(summary.alerts.total).toBe(13);
    expect(summary.alerts.bySeverity).toEqual({ critical: 1, high: 2, medium: 4, low: 2, info: 3, unknown: 1 });
    expect(summary.alerts.byType.find((t) => t.type === 'legacy-check')).toEqual({
      type: 'legacy-check',
      name: null,
      severity: 'unknown',
      count: 1,
    });
    await expectNoTokenAnywhere(run);
  });

  it('defaults the output directory to ./svc-snapshot-audit-<date> and prints a readable summary', async () => {
    const parent = tmpDir('svc-snapshot-audit-e2e-');
    const result = await runCli(['audit', '--audit-url', server.url, '--ca-file', caFile], {
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
      cwd: parent,
    });
    expect(result.code).toBe(0);
    const [dir] = await readdir(parent);
    expect(dir).toMatch(/^svc-snapshot-audit-\d{4}-\d{2}-\d{2}$/);
    expect(result.stdout).toContain(`Audit collection written to ${path.join(parent, dir!)}`);
    expect(result.stdout).toMatch(/alerts: 13 \(critical 1, high 2, medium 4, low 2, info 3, unknown 1\)/);
    expect(result.stdout).toMatch(/4 {2}login-failed \(Failed login\), medium/);
  });

  it('reads the alerts of the --from/--to range only', async () => {
    const run = await audit(['--from', '2026-10-01', '--to', '2026-10-31', '--json']);
    expect(run.result.code).toBe(0);
    const alerts = JSON.parse(
      await readFile(path.join(run.out, 'alerts-2026-10-01-2026-10-31.json'), 'utf8'),
    ) as Array<{ date: string }>;
    expect(alerts.length).toBe(6);
    expect(alerts.every((a) => a.date >= '2026-10-01' && a.date <= '2026-10-31')).toBe(true);
    const m = await manifest(run);
    expect(m).toMatchObject({ from: '2026-10-01', to: '2026-10-31' });
    expect(m.routes.map((r) => r.route)).toContain('GET /alerts/2026-10-01/2026-10-31');
    const summary = JSON.parse(run.result.stdout) as AuditSummary;
    expect(summary.alerts.bySeverity).toEqual({ critical: 0, high: 1, medium: 3, low: 1, info: 1, unknown: 0 });
  });

  it('runs a query with its declared defaults, the period from --from/--to', async () => {
    const run = await audit(['--from', '2026-11-01', '--to', '2026-11-30', '--query', 'logins']);
    expect(run.result.code).toBe(0);
    const file = JSON.parse(await readFile(path.join(run.out, 'queries-logins-2026-11-30.json'), 'utf8'));
    expect(file.params).toEqual({ startDate: '2026-11-01', endDate: '2026-11-30', user: '', limit: 100 });
    expect(file.returnNames).toEqual(['date', 'user', 'logins']);
    expect(file.rows).toEqual([
      ['2026-11-02', 'alice', 6],
      ['2026-11-09', 'carol', 2],
      ['2026-11-16', 'dave', 3],
      ['2026-11-20', 'alice', 2],
    ]);
    expect(file.records[0]).toEqual({ date: '2026-11-02', user: 'alice', logins: 6 });
    const sent = backend.requests.find((r) => r.method === 'POST');
    expect(sent).toMatchObject({ path: '/queries/logins/2026-11-30', token: 'valid', body: file.params });
    const m = await manifest(run);
    const route = m.routes.find((r) => r.route === 'POST /queries/logins/2026-11-30')!;
    expect(route.file).toBe('queries-logins-2026-11-30.json');
    expect(route.responseBytes).toBe(Buffer.byteLength(JSON.stringify(file.rows)));
  });

  it('converts --param values by the declared parameter type and applies them to every query that takes them', async () => {
    const run = await audit([
      '--query',
      'logins',
      '--query',
      'top-alerts',
      '--query',
      'vm-usage',
      '--param',
      'limit=1',
      '--param',
      'user=bob',
      '--param',
      'includeSystem=true',
      '--param',
      'minHours=10',
      '--param',
      'severities=critical,high,medium',
    ]);
    expect(run.result.code).toBe(0);
    const logins = JSON.parse(await readFile(path.join(run.out, 'queries-logins-2037-12-31.json'), 'utf8'));
    expect(logins.params).toEqual({ startDate: '1970-01-01', endDate: '2037-12-31', user: 'bob', limit: 1 });
    expect(logins.records).toEqual([{ date: '2026-10-01', user: 'bob', logins: 2 }]);
    const top = JSON.parse(await readFile(path.join(run.out, 'queries-top-alerts-2037-12-31.json'), 'utf8'));
    expect(top.params).toEqual({ limit: 1, severities: ['critical', 'high', 'medium'] });
    expect(top.records).toEqual([{ type: 'login-failed', count: 4 }]);
    const vm = JSON.parse(await readFile(path.join(run.out, 'queries-vm-usage-2037-12-31.json'), 'utf8'));
    expect(vm.params).toMatchObject({ includeSystem: true, minHours: 10 });
    expect(vm.records).toEqual([
      { vm: 'vm-01', owner: 'alice', hours: 120.5, system: false },
      { vm: 'vm-02', owner: 'bob', hours: 12, system: false },
      { vm: 'vm-04', owner: 'system', hours: 744, system: true },
    ]);
  });

  it('downloads reports with and without an object id as checked spreadsheets', async () => {
    const run = await audit([
      '--from',
      '2026-10-01',
      '--to',
      '2026-11-30',
      '--report',
      'monthly-access',
      '--report',
      'user-activity:alice',
      '--json',
    ]);
    expect(run.result.code).toBe(0);
    for (const f of [
      'reports-monthly-access-2026-10-01-2026-11-30.xlsx',
      'reports-user-activity-2026-10-01-2026-11-30-alice.xlsx',
    ]) {
      const bytes = await readFile(path.join(run.out, f));
      expect(bytes.subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    }
    const m = await manifest(run);
    expect(m.reports).toEqual([
      {
        id: 'monthly-access',
        objectId: null,
        file: 'reports-monthly-access-2026-10-01-2026-11-30.xlsx',
        bytes: expect.any(Number),
      },
      {
        id: 'user-activity',
        objectId: 'alice',
        file: 'reports-user-activity-2026-10-01-2026-11-30-alice.xlsx',
        bytes: expect.any(Number),
      },
    ]);
    expect(m.routes.map((r) => r.route)).toContain('GET /reports/user-activity/2026-10-01/2026-11-30/alice');
    await expectNoTokenAnywhere(run);
  });

  it('refuses a report built for one object when no object id is given, naming the parameter', async () => {
    const run = await audit(['--report', 'user-activity']);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toContain('userId');
    expect(run.result.stderr).toContain('--report user-activity:<userId>');
    await expectNothingPublished(run);
  });

  it('refuses a malformed token before any request, without echoing it', async () => {
    const malformed = 'FakeAuditToken000000=='; // 20 alphanumerics, not 22
    for (const env of [{ SVC_AUDIT_TOKEN: malformed }, { SVC_AUDIT_TOKEN: `${FAKE_AUDIT_TOKEN}\n` }]) {
      const run = await audit([], env);
      expect(run.result.code).toBe(2);
      expect(run.result.stderr).toContain('22 letters or digits');
      expect(run.result.stderr).not.toContain(malformed);
      await expectNoTokenAnywhere(run, [malformed, FAKE_AUDIT_TOKEN]);
      await expectNothingPublished(run);
    }
    const viaFlag = await audit(['--audit-token', 'Fake-Audit-Token-000000=='], {});
    expect(viaFlag.result.code).toBe(2);
    expect(viaFlag.result.stderr).toContain('--audit-token');
    expect(viaFlag.result.stderr).not.toContain('Fake-Audit-Token-000000==');
    expect(backend.requests).toEqual([]);
  });

  it('lets SVC_AUDIT_TOKEN win over --audit-token', async () => {
    const run = await audit(['--audit-token', WRONG_FAKE_AUDIT_TOKEN]);
    expect(run.result.code).toBe(0);
    expect(backend.requests.slice(1).every((r) => r.token === 'valid')).toBe(true);
    await expectNoTokenAnywhere(run);
  });

  it('stops with exit 3 on 401, naming the route, and publishes nothing', async () => {
    const run = await audit([], { SVC_AUDIT_TOKEN: WRONG_FAKE_AUDIT_TOKEN });
    expect(run.result.code).toBe(3);
    expect(run.result.stderr).toMatch(/401 on GET \/[a-z/]+: the audit token \(from SVC_AUDIT_TOKEN\) was refused/);
    await expectNothingPublished(run);
    await expectNoTokenAnywhere(run);
  });

  it('stops with exit 3 on 403 too', async () => {
    useBackend({ faults: { rejectAll: 403 } });
    const run = await audit(['--audit-token', FAKE_AUDIT_TOKEN], {});
    expect(run.result.code).toBe(3);
    expect(run.result.stderr).toMatch(/403 on GET \//);
    expect(run.result.stderr).toContain('--audit-token');
    await expectNothingPublished(run);
    await expectNoTokenAnywhere(run);
  });

  it('refuses unknown query and report ids, listing the ids the service lists', async () => {
    const q = await audit(['--query', 'no-such-query']);
    expect(q.result.code).toBe(2);
    expect(q.result.stderr).toContain('query "no-such-query" is not listed');
    expect(q.result.stderr).toContain('logins, vm-usage, top-alerts');
    await expectNothingPublished(q);
    const r = await audit(['--report', 'no-such-report:x']);
    expect(r.result.code).toBe(2);
    expect(r.result.stderr).toContain('monthly-access, user-activity, vm-inventory');
    await expectNothingPublished(r);
    // Neither asked for data: only /info and the capability lists were read.
    expect(backend.requests.filter((x) => x.path.startsWith('/alerts/19') || x.method === 'POST')).toEqual([]);
  });

  it('refuses an unknown --param naming the valid ones, and a --param without "="', async () => {
    const unknown = await audit(['--query', 'logins', '--param', 'colour=red']);
    expect(unknown.result.code).toBe(2);
    expect(unknown.result.stderr).toContain('they take: limit, user');
    const noEq = await audit(['--query', 'logins', '--param', 'limit']);
    expect(noEq.result.code).toBe(2);
    expect(noEq.result.stderr).toContain('must be name=value');
  });

  it('fails with exit 1 when a report answers JSON instead of a spreadsheet', async () => {
    useBackend({ faults: { reportAsJson: ['vm-inventory'] } });
    const run = await audit(['--report', 'monthly-access', '--report', 'vm-inventory']);
    expect(run.result.code).toBe(1);
    expect(run.result.stderr).toContain(
      'GET /reports/vm-inventory/1970-01-01/2037-12-31: the report did not answer with a spreadsheet',
    );
    expect(run.result.stderr).toMatch(
      /bytes of JSON \(application\/json\) starting "\{"error":"report engine unavailable"/,
    );
    await expectNothingPublished(run);
  });

  it('refuses dates that are not real dates and a range that ends before it starts, before any request', async () => {
    const bad = await audit(['--from', '2026-02-30']);
    expect(bad.result.code).toBe(2);
    expect(bad.result.stderr).toContain('--from must be a calendar date YYYY-MM-DD');
    const shape = await audit(['--to', '2026-1-5']);
    expect(shape.result.code).toBe(2);
    const reversed = await audit(['--from', '2026-12-01', '--to', '2026-11-01']);
    expect(reversed.result.code).toBe(2);
    expect(reversed.result.stderr).toContain('--from 2026-12-01 is after --to 2026-11-01');
    expect(backend.requests).toEqual([]);
  });

  it('requires an audit URL, https or loopback http', async () => {
    const parent = tmpDir('svc-snapshot-audit-e2e-');
    const none = await runCli(['audit'], { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, cwd: parent });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--audit-url');
    const plain = await runCli(['audit'], {
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN, SVC_AUDIT_URL: 'http://audit.example.org' },
      cwd: parent,
    });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('SVC_AUDIT_URL uses http://');
  });

  it('verifies TLS: without --ca-file the test CA is not trusted', async () => {
    const parent = tmpDir('svc-snapshot-audit-e2e-');
    const result = await runCli(['audit', '--audit-url', server.url, '--retries', '0'], {
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
      cwd: parent,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('GET /info: TLS verification failed');
    expect(await readdir(parent)).toEqual([]);
  });
});
