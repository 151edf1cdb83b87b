import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { getTestCerts } from '../fake/certs.js';
import {
  AuditSummary,
  CheckAuditSummary,
  CheckSummary,
  CollectSummary,
  SnapshotSummary,
  renderSummarySchema,
} from '../../src/summaries/schemas.js';

let site: FakeSite;
let audit: FakeServer;
beforeAll(async () => {
  site = await startFakeSite();
  audit = await startFakeServer(createAuditBackend().handlers, { tls: true });
});
afterAll(async () => {
  await site.close();
  await audit.close();
});

const env = { SVC_TOKEN: ALL_TYPES_TOKEN.value };

describe('--json output', () => {
  it('of a live snapshot matches the documented schema', async () => {
    const res = await runCli(
      ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', join(tmpDir(), 's'), '--json'],
      { env },
    );
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.exports).toHaveLength(15);
    expect(summary.source).toBe('live');
  });

  it('of a replay with unavailable exports matches the documented schema', async () => {
    const res = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.13.8'),
      '--out-dir',
      join(tmpDir(), 's'),
      '--json',
    ]);
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.exports.filter((e) => !e.available).every((e) => typeof e.reason === 'string')).toBe(true);
  });

  it('of a partial snapshot lists the failed route', async () => {
    site.backend.setFault('teams', { statuses: [500], always: true });
    const res = await runCli(
      [
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--out-dir',
        join(tmpDir(), 's'),
        '--json',
        '--allow-partial',
        '--retries',
        '0',
      ],
      { env },
    );
    site.backend.clearFaults();
    expect(res.code).toBe(4);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.complete).toBe(false);
    expect(summary.failed).toEqual([
      { route: 'GET /api/teams', status: 500, error: expect.stringMatching(/HTTP 500/) },
    ]);
  });

  it('of collect matches the documented schema', async () => {
    const res = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', join(tmpDir(), 'c'), '--json'],
      { env },
    );
    expect(res.code).toBe(0);
    expect(CollectSummary.parse(JSON.parse(res.stdout)).routes.ok).toBe(17);
  });

  it('of check matches the documented schema', async () => {
    const res = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile, '--json'], { env });
    expect(res.code).toBe(0);
    expect(CheckSummary.parse(JSON.parse(res.stdout)).ok).toBe(true);
  });

  it('of audit and check --audit match the documented schema', async () => {
    const auditEnv = { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN };
    const common = ['--audit-url', audit.url, '--ca-file', getTestCerts().caFile, '--json'];
    const res = await runCli(['audit', ...common, '--out-dir', join(tmpDir(), 'a')], { env: auditEnv });
    expect(res.code).toBe(0);
    expect(AuditSummary.parse(JSON.parse(res.stdout)).command).toBe('audit');
    const chk = await runCli(['check', '--audit', ...common], { env: auditEnv });
    expect(chk.code).toBe(0);
    expect(CheckAuditSummary.parse(JSON.parse(chk.stdout)).ok).toBe(true);
  });

  it('is documented by the committed docs/summary-schema.json (regenerate with node --import tsx scripts/gen-docs.ts)', () => {
    expect(readFileSync(join(REPO_ROOT, 'docs', 'summary-schema.json'), 'utf8')).toBe(renderSummarySchema());
  });
});

describe('plain progress on stderr', () => {
  it('is one line per route without control characters when not on a terminal, and silent with --quiet', async () => {
    const res = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', join(tmpDir(), 'c')],
      { env },
    );
    expect(res.code).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(res.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    const lines = res.stderr.trim().split('\n');
    expect(lines.filter((l) => /^svc-snapshot: ok {6}GET \/api\//.test(l))).toHaveLength(17);
    const quiet = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', join(tmpDir(), 'c'), '--quiet'],
      { env },
    );
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toMatch(/Raw collection written/);
  });

  it('shows errors even with --quiet', async () => {
    const res = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--quiet'], {
      env: { SVC_TOKEN: 'fake-token-unknown' },
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/^svc-snapshot: error: 401 on GET \/api\/realms/);
  });
});

describe('the command line', () => {
  it('names the commands when given an unknown one', async () => {
    const res = await runCli(['snapshto']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown command "snapshto"; the commands are snapshot, collect, audit, check, diff/);
  });

  it('has --help with examples on every command, and --version', async () => {
    for (const cmd of ['snapshot', 'collect', 'audit', 'check', 'diff']) {
      const res = await runCli([cmd, '--help']);
      expect(res.code, cmd).toBe(0);
      expect(res.stdout, cmd).toMatch(/Examples:\n {2}\$ .*svc-snapshot/);
    }
    const v = await runCli(['--version']);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);
  });

  it('survives a reader that closes stdout early', async () => {
    const { spawn } = await import('node:child_process');
    const out = join(tmpDir(), 's');
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          join(REPO_ROOT, 'bin', 'svc-snapshot.js'),
          '--replay',
          join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
          '--out-dir',
          out,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout.destroy();
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.on('close', (c) => {
        expect(err).not.toMatch(/EPIPE|at .*\.js/);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    expect(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')).toMatch(/"kind": "snapshot"/);
  });
});
