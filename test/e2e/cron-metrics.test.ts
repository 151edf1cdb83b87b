import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { runCli, startCli, tmpDir, type CliResult, stderrSeen } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { EXPORTS } from '../../src/exports/catalog.js';

// --metrics-file end to end (CONTRACT section 12): the file node_exporter's
// textfile collector reads, after success, failure, a usage error and SIGTERM.
const TOKEN = ALL_TYPES_TOKEN.value;
let site: FakeSite;
beforeAll(async () => {
  site = await startFakeSite();
});
afterAll(async () => {
  await site.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict reader of the text format: every line a comment of HELP/TYPE or a sample. */
function parseMetrics(text: string): Sample[] {
  expect(text.endsWith('\n')).toBe(true);
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m = /^([a-z_]+)\{((?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*)\} (-?[0-9.e+]+)$/.exec(line);
    expect(m, line).not.toBeNull();
    const labels = Object.fromEntries(
      [...m![2]!.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    samples.push({ name: m![1]!, labels, value: Number(m![3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

function readMetrics(file: string, command = 'snapshot'): Sample[] {
  const samples = parseMetrics(readFileSync(file, 'utf8'));
  for (const s of samples) expect(s.labels.command, s.name).toBe(command);
  return samples;
}

function snapshot(
  dir: string,
  args: string[],
  env: Record<string, string | undefined> = { SVC_TOKEN: TOKEN },
): Promise<CliResult> {
  return runCli(['snapshot', '--base-url', site.url, '--ca-file', site.caFile, '--retries', '0', '--quiet', ...args], {
    env,
    cwd: dir,
  });
}

const NAMES = [
  'svc_snapshot_last_run_timestamp_seconds',
  'svc_snapshot_last_success_timestamp_seconds',
  'svc_snapshot_exit_code',
  'svc_snapshot_duration_seconds',
];

describe('--metrics-file', () => {
  it('after a complete snapshot: every contract metric, labelled with the command, and no temporary file left', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'textfile', 'svc-snapshot.prom');
    mkdirSync(join(dir, 'textfile'));
    const before = Date.now() / 1000;
    const res = await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out', '--json']);
    expect(res.code).toBe(0);
    const samples = readMetrics(metrics);
    for (const name of [
      ...NAMES,
      'svc_snapshot_records',
      'svc_snapshot_routes',
      'svc_snapshot_validation_issues',
      'svc_snapshot_drift_fields',
    ]) {
      expect(
        samples.some((s) => s.name === name),
        name,
      ).toBe(true);
    }
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(0);
    const lastRun = value(samples, 'svc_snapshot_last_run_timestamp_seconds')!;
    expect(lastRun).toBeGreaterThanOrEqual(Math.floor(before));
    expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds')).toBe(lastRun);
    const summary = JSON.parse(res.stdout);
    for (const e of summary.exports) expect(value(samples, 'svc_snapshot_records', { export: e.export })).toBe(e.count);
    expect(samples.filter((s) => s.name === 'svc_snapshot_records')).toHaveLength(EXPORTS.length);
    expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBe(summary.routes.ok);
    expect(value(samples, 'svc_snapshot_routes', { state: 'skipped' })).toBe(summary.routes.skipped);
    expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBe(0);
    expect(value(samples, 'svc_snapshot_validation_issues')).toBe(summary.validation.issues);
    expect(readdirSync(join(dir, 'textfile'))).toEqual(['svc-snapshot.prom']);
    expect(readFileSync(metrics, 'utf8')).not.toContain(TOKEN);
  });

  it('after a failure keeps the last success of the previous file and says which exit code', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'svc.prom');
    expect((await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out'])).code).toBe(0);
    const success = value(readMetrics(metrics), 'svc_snapshot_last_success_timestamp_seconds')!;

    const rejected = await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out2'], {
      SVC_TOKEN: 'not-a-token-the-site-knows',
    });
    expect(rejected.code).toBe(3);
    let samples = readMetrics(metrics);
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(3);
    expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds')).toBe(success);
    expect(value(samples, 'svc_snapshot_last_run_timestamp_seconds')!).toBeGreaterThanOrEqual(success);
    // Nothing was built: no record counts that would look like an empty site. The refused route is counted as failed.
    expect(samples.some((s) => s.name === 'svc_snapshot_records')).toBe(false);
    expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBeGreaterThanOrEqual(1);

    // A usage error found after the options were parsed (no base URL) is recorded too.
    const usage = await runCli(['snapshot', '--metrics-file', metrics, '--quiet'], {
      env: { SVC_TOKEN: TOKEN },
      cwd: dir,
    });
    expect(usage.code).toBe(2);
    samples = readMetrics(metrics);
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(2);
    expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds')).toBe(success);
    // It never learnt its site: the file keeps the site it was for, and says the routes (none) all the same.
    for (const s of samples) expect(s.labels.site, s.name).toBe(site.url);
    expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBe(0);

    // --allow-partial publishes, but exit 4 is not a success.
    site.backend.setFault('drives', { statuses: [500], always: true });
    try {
      expect((await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out3', '--allow-partial'])).code).toBe(4);
    } finally {
      site.backend.clearFaults();
    }
    samples = readMetrics(metrics);
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(4);
    expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds')).toBe(success);
    expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBe(1);
  });

  it('after a run that fails on /api/drives: the routes by state, the failed one counted, and no build figures (the build never ran)', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'svc.prom');
    site.backend.setFault('drives', { statuses: [500], always: true });
    let res: CliResult;
    try {
      res = await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out']);
    } finally {
      site.backend.clearFaults();
    }
    expect(res.code).toBe(1);
    const samples = readMetrics(metrics);
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(1);
    expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBeGreaterThan(0);
    expect(value(samples, 'svc_snapshot_routes', { state: 'skipped' })).toBeDefined();
    expect(samples.some((s) => s.name === 'svc_snapshot_records')).toBe(false);
    for (const s of samples) expect(s.labels.site, s.name).toBe(site.url);
  });

  it('after a run refused once built (--strict with a field of the wrong type): the routes, the records, validation and drift counts', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'svc.prom');
    const users = JSON.parse(site.backend.responseBody('users')) as Array<Record<string, unknown>>;
    users[0]!.firstName = 12345;
    site.backend.setFault('users', { body: users });
    let res: CliResult;
    try {
      res = await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'out', '--strict']);
    } finally {
      site.backend.clearFaults();
    }
    expect([res.code, res.stderr]).toEqual([1, expect.stringMatching(/--strict: 1 schema problem/)]);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const samples = readMetrics(metrics);
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(1);
    expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBe(0);
    expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBeGreaterThan(0);
    expect(value(samples, 'svc_snapshot_validation_issues')).toBe(1);
    expect(value(samples, 'svc_snapshot_drift_fields')).toBe(0);
    expect(value(samples, 'svc_snapshot_records', { export: 'users' })).toBe(users.length);
    expect(samples.filter((s) => s.name === 'svc_snapshot_records')).toHaveLength(EXPORTS.length);
  });

  it('is not broken by a garbled, hostile, huge or linked previous file', async () => {
    const dir = tmpDir();
    const cases: Array<[string, (file: string) => void]> = [
      ['binary', (f) => writeFileSync(f, Buffer.from([0, 255, 10, 0x1b, 0x5b, 50, 74]))],
      [
        'injection',
        (f) =>
          writeFileSync(
            f,
            'svc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1e400\nsvc_snapshot_last_success_timestamp_seconds{command="snapshot"} NaN\nsvc_snapshot_last_success_timestamp_seconds{command="snapshot"} 12 }\n',
          ),
      ],
      [
        'other command',
        (f) => writeFileSync(f, 'svc_snapshot_last_success_timestamp_seconds{command="collect"} 1700000000\n'),
      ],
      [
        'huge',
        (f) =>
          writeFileSync(
            f,
            `svc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1700000000\n${'#'.repeat(3 * 1024 * 1024)}\n`,
          ),
      ],
      ['directory', (f) => mkdirSync(f)],
    ];
    for (const [name, make] of cases) {
      const file = join(dir, `${name.replace(' ', '-')}.prom`);
      make(file);
      const res = await runCli(['snapshot', '--metrics-file', file, '--quiet'], { cwd: dir });
      expect(res.code, name).toBe(2);
      expect(res.stderr, name).not.toMatch(/\n\s+at |unexpected/);
      if (name === 'directory') {
        // It cannot be replaced; the run says so and keeps its exit code.
        expect(res.stderr).toMatch(/could not write the metrics file/);
        expect(statSync(file).isDirectory()).toBe(true);
        continue;
      }
      const samples = readMetrics(file);
      expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds'), name).toBe(0);
      expect(value(samples, 'svc_snapshot_exit_code'), name).toBe(2);
    }
    // A link is replaced, never written through.
    const target = join(dir, 'target.txt');
    writeFileSync(target, 'svc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1700000000\n');
    symlinkSync(target, join(dir, 'link.prom'));
    expect((await runCli(['snapshot', '--metrics-file', join(dir, 'link.prom'), '--quiet'], { cwd: dir })).code).toBe(
      2,
    );
    expect(readFileSync(target, 'utf8')).toBe(
      'svc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1700000000\n',
    );
    expect(value(readMetrics(join(dir, 'link.prom')), 'svc_snapshot_last_success_timestamp_seconds')).toBe(0);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('on SIGTERM: exit 143, the metrics say 143, the last success survives, and nothing is published', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'svc.prom');
    expect((await snapshot(dir, ['--metrics-file', metrics, '--out-dir', 'first'])).code).toBe(0);
    const success = value(readMetrics(metrics), 'svc_snapshot_last_success_timestamp_seconds')!;
    site.backend.setFault('drives', { delayMs: 20_000 });
    try {
      const { child, result } = startCli(
        [
          'snapshot',
          '--base-url',
          site.url,
          '--ca-file',
          site.caFile,
          '--metrics-file',
          metrics,
          '--out-dir',
          'second',
        ],
        {
          env: { SVC_TOKEN: TOKEN },
          cwd: dir,
        },
      );
      await stderrSeen(child, 'GET /api/users');
      child.kill('SIGTERM');
      const res = await result;
      expect(res.code).toBe(143);
      const samples = readMetrics(metrics);
      expect(value(samples, 'svc_snapshot_exit_code')).toBe(143);
      // What it knew when stopped: the routes read so far (users among them), none failed, nothing built.
      expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBeGreaterThanOrEqual(1);
      expect(value(samples, 'svc_snapshot_routes', { state: 'failed' })).toBe(0);
      expect(samples.some((s) => s.name === 'svc_snapshot_records')).toBe(false);
      expect(value(samples, 'svc_snapshot_exit_code', { site: site.url })).toBe(143);
      expect(value(samples, 'svc_snapshot_last_success_timestamp_seconds')).toBe(success);
      expect(existsSync(join(dir, 'second'))).toBe(false);
      expect(readdirSync(dir).sort()).toEqual(['first', 'svc.prom']);
    } finally {
      site.backend.clearFaults();
    }
  });

  it('labels collect metrics with command="collect"', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'collect.prom');
    const res = await runCli(
      [
        'collect',
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--metrics-file',
        metrics,
        '--out-dir',
        'raw',
        '--quiet',
      ],
      { env: { SVC_TOKEN: TOKEN }, cwd: dir },
    );
    expect(res.code).toBe(0);
    const samples = readMetrics(metrics, 'collect');
    expect(value(samples, 'svc_snapshot_exit_code')).toBe(0);
    expect(value(samples, 'svc_snapshot_routes', { state: 'read' })).toBeGreaterThan(0);
  });
});
