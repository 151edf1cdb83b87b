import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestHandler } from 'msw';
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
  return runCli(['audit', '--audit-url', server.url, '--ca-file', caFile, '--retries', '0', '--out-dir', outDir, ...extra], { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, cwd });
}

describe('--keep on audit', () => {
  it('deletes older complete audit collections, never a tampered one, a snapshot-named one or another kind', async () => {
    const parent = tmpDir();
    expect((await audit(parent, 'svc-snapshot-audit-2026-01-01')).code).toBe(0);
    for (const d of ['2026-01-02', '2026-01-03', '2026-01-04']) cpSync(join(parent, 'svc-snapshot-audit-2026-01-01'), join(parent, `svc-snapshot-audit-${d}`), { recursive: true });
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
    expect(summary.pruned).toEqual([join(parent, 'svc-snapshot-audit-2026-01-01'), join(parent, 'svc-snapshot-audit-2026-01-02')]);
    expect(readdirSync(parent).sort()).toEqual(['svc-snapshot-2026-01-01', 'svc-snapshot-audit-2026-01-03', 'svc-snapshot-audit-2026-01-04', 'svc-snapshot-audit-2026-02-01']);
  });

  it('refuses --keep 0 before any request', async () => {
    const parent = tmpDir();
    const res = await audit(parent, 'svc-snapshot-audit-2026-02-01', ['--keep', '0']);
    expect(res.code).toBe(2);
    expect(readdirSync(parent)).toEqual([]);
  });
});
