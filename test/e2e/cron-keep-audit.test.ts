import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { http, HttpResponse, type RequestHandler } from 'msw';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { AuditSummary } from '../../src/summaries/schemas.js';

// --keep on `audit` (CONTRACT section 12): the real binary against the fake audit service.
const handlers: RequestHandler[] = [];
let server: FakeServer;
const caFile = getTestCerts().caFile;
beforeAll(async () => {
  server = await startFakeServer(handlers, { tls: true });
  handlers.push(...createAuditBackend().handlers);
});
afterAll(async () => {
  await server.close();
});

function audit(cwd: string, outDir: string, extra: string[] = []) {
  return runCli(
    ['audit', '--audit-url', server.url, '--ca-file', caFile, '--retries', '0', '--out-dir', outDir, ...extra],
    { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, cwd },
  );
}

describe('--keep on audit', () => {
  it('deletes older complete audit collections, never a tampered one, a snapshot-named one or another kind', async () => {
    const parent = tmpDir();
    expect((await audit(parent, 'svc-snapshot-audit-2026-01-01')).code).toBe(0);
    for (const d of ['2026-01-02', '2026-01-03', '2026-01-04'])
      cpSync(join(parent, 'svc-snapshot-audit-2026-01-01'), join(parent, `svc-snapshot-audit-${d}`), {
        recursive: true,
      });
    // A request recorded as failed, and a manifest whose file list does not cover the directory.
    const failedManifest = join(parent, 'svc-snapshot-audit-2026-01-03/_audit-manifest.json');
    const m = JSON.parse(readFileSync(failedManifest, 'utf8'));
    m.routes[0].status = 500;
    writeFileSync(failedManifest, JSON.stringify(m));
    writeFileSync(join(parent, 'svc-snapshot-audit-2026-01-04/extra.xlsx'), 'not ours');
    cpSync(join(parent, 'svc-snapshot-audit-2026-01-01'), join(parent, 'svc-snapshot-2026-01-01'), { recursive: true });

    const res = await audit(parent, 'svc-snapshot-audit-2026-02-01', ['--keep', '1', '--json']);
    expect(res.code).toBe(0);
    const summary = AuditSummary.parse(JSON.parse(res.stdout));
    expect(summary.pruned).toEqual([
      join(parent, 'svc-snapshot-audit-2026-01-01'),
      join(parent, 'svc-snapshot-audit-2026-01-02'),
    ]);
    expect(readdirSync(parent).sort()).toEqual([
      'svc-snapshot-2026-01-01',
      'svc-snapshot-audit-2026-01-03',
      'svc-snapshot-audit-2026-01-04',
      'svc-snapshot-audit-2026-02-01',
    ]);
  });

  it('refuses --keep 0 before any request', async () => {
    const parent = tmpDir();
    const res = await audit(parent, 'svc-snapshot-audit-2026-02-01', ['--keep', '0']);
    expect(res.code).toBe(2);
    expect(readdirSync(parent)).toEqual([]);
  });
});

describe('--metrics-file on audit', () => {
  it('after a request that fails (HTTP 500 on the tags): exit 1, the requests by state with the failed one counted, labelled with the audit service as site', async () => {
    const parent = tmpDir();
    const metrics = join(parent, 'audit.prom');
    const failing = http.get(/\/tags\/list$/, () => HttpResponse.json({ message: 'broken' }, { status: 500 }));
    handlers.unshift(failing);
    let res;
    try {
      res = await audit(parent, 'svc-snapshot-audit-2026-02-01', ['--metrics-file', metrics, '--quiet']);
    } finally {
      handlers.splice(handlers.indexOf(failing), 1);
    }
    expect([res.code, res.stderr]).toEqual([1, expect.stringMatching(/tags/)]);
    const text = readFileSync(metrics, 'utf8');
    const sample = (name: string, extra = '') =>
      new RegExp(`^${name}\\{command="audit",site="${server.url.replace(/[.]/g, '\\.')}"${extra}\\} (\\d+)$`, 'm').exec(
        text,
      )?.[1];
    expect(sample('svc_snapshot_exit_code')).toBe('1');
    expect(sample('svc_snapshot_routes', ',state="failed"')).toBe('1');
    expect(Number(sample('svc_snapshot_routes', ',state="read"'))).toBeGreaterThanOrEqual(1);
    expect(readdirSync(parent)).toEqual(['audit.prom']);
  });
});
