/**
 * Regenerates recordings/audit/: one example audit collection, made by the
 * real `audit` command against the fake audit service (test/fake/audit-backend.ts)
 * over loopback HTTPS with the test CA.
 *
 *   node --import tsx scripts/record-audit.ts
 *
 * The run's clock is fixed (2026-11-21, local time) so the names are stable.
 * Two manifest fields that change on every run are normalised after the
 * fact, and only those: `auditUrl` (the fake listens on a random port) becomes
 * https://audit.example.org, and `durationMs` becomes 0. Every file's bytes and
 * sha256 are as the command wrote them.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUDIT_MANIFEST, type AuditManifest } from '../src/audit/collect.js';
import { runAudit } from '../src/commands/audit.js';
import { plainReporter } from '../src/progress/reporter.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../test/fake/audit-backend.js';
import { getTestCerts } from '../test/fake/certs.js';
import { startFakeServer } from '../test/fake/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOW = new Date(2026, 10, 21, 2, 0, 0);
const NAME = 'svc-snapshot-audit-2026-11-21';
const TARGET = path.join(ROOT, 'recordings', 'audit', NAME);

const ARGS = {
  from: '2026-10-01',
  to: '2026-11-30',
  query: ['logins', 'top-alerts'],
  param: ['limit=3'],
  report: ['monthly-access', 'user-activity:alice'],
  objects: ['user:alice,bob', 'vm'],
};

async function main(): Promise<void> {
  const certs = getTestCerts();
  const backend = createAuditBackend();
  const server = await startFakeServer(backend.handlers, { tls: true, certs });
  const work = await mkdtemp(path.join(os.tmpdir(), 'record-audit-'));
  try {
    const out = path.join(work, NAME);
    let summary = '';
    const result = await runAudit(
      { auditUrl: server.url, caFile: certs.caFile, outDir: out, json: true, ...ARGS },
      {
        env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
        cwd: work,
        stdout: (text) => (summary += text),
        reporter: plainReporter((line) => process.stderr.write(line), false),
        now: () => NOW,
      },
    );
    if (result.exitCode !== 0) throw new Error(`audit ended with exit code ${result.exitCode}`);

    const manifestFile = path.join(out, AUDIT_MANIFEST);
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as AuditManifest;
    manifest.auditUrl = 'https://audit.example.org';
    for (const r of manifest.routes) r.durationMs = 0;
    await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

    await rm(TARGET, { recursive: true, force: true });
    await cp(out, TARGET, { recursive: true });
    const s = JSON.parse(summary) as { files: number; alerts: { total: number } };
    process.stderr.write(`record-audit: wrote ${path.relative(ROOT, TARGET)} (${s.files} files, ${s.alerts.total} alerts)\n`);
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`record-audit: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
