/**
 * A run stopped by SIGTERM or SIGINT sends its digest too (a failed run
 * sends one, with what it knew), from a child process while
 * the stopped run waits, bounded by --notify-timeout; the exit code stays
 * 143 (130), the metrics count each sink, and no target's secret is printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { startPingReceiver, type PingReceiver } from '../helpers/ping-receiver.js';
import { startCli, stderrSeen, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const SECRET = 'signal-hook-secret-5e6f7a';

let site: FakeSite;
let hook: PingReceiver;
beforeAll(async () => {
  [site, hook] = await Promise.all([startFakeSite(), startPingReceiver()]);
});
afterAll(async () => {
  await Promise.all([site?.close(), hook?.close()]);
});

/** A snapshot stopped by `signal` once it has read the users; its result, stderr and metrics. */
async function stopped(signal: 'SIGTERM' | 'SIGINT', extra: string[] = []) {
  const dir = tmpDir();
  const metrics = join(dir, 'svc.prom');
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
        'out',
        '--notify',
        `${hook.url}/in/${SECRET}`,
        ...extra,
      ],
      { env: { SVC_TOKEN: TOKEN }, cwd: dir },
    );
    await stderrSeen(child, 'GET /api/users');
    child.kill(signal);
    const res = await result;
    return { res, metrics: readFileSync(metrics, 'utf8'), published: existsSync(join(dir, 'out')) };
  } finally {
    site.backend.clearFaults();
  }
}

describe('--notify on a run stopped by a signal', () => {
  it('SIGTERM: one digest, failed with exit 143 and why; the metrics count the sink; no secret printed', async () => {
    hook.received.length = 0;
    hook.status = 200;
    const { res, metrics, published } = await stopped('SIGTERM');
    expect(res.code).toBe(143);
    expect(published).toBe(false);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.path).toBe(`/in/${SECRET}`);
    const body = JSON.parse(hook.received[0]!.body);
    expect(body.outcome.state).toBe('failed');
    expect(body.outcome.exitCode).toBe(143);
    expect(body.outcome.failure).toMatch(/SIGTERM/);
    expect(body.site).toBe(site.url);
    expect(metrics).toMatch(/^svc_snapshot_notify_failures\{[^}]*sink="webhook 127\.0\.0\.1:\d+"[^}]*\} 0$/m);
    expect(metrics).toMatch(/^svc_snapshot_exit_code\{[^}]*\} 143$/m);
    for (const text of [res.stdout, res.stderr, metrics]) expect(text).not.toContain(SECRET);
  }, 60_000);

  it('SIGINT with a target that fails: a warning naming the sink, a failure in the metrics, exit 130', async () => {
    hook.received.length = 0;
    hook.status = 503;
    try {
      const { res, metrics } = await stopped('SIGINT', ['--notify-timeout', '2']);
      expect(res.code).toBe(130);
      expect(hook.received.length).toBeGreaterThanOrEqual(1);
      expect(res.stderr).toMatch(/warning: notify: webhook #1 \(webhook 127\.0\.0\.1:\d+\) failed: answered HTTP 503/);
      expect(metrics).toMatch(/^svc_snapshot_notify_failures\{[^}]*sink="webhook 127\.0\.0\.1:\d+"[^}]*\} 1$/m);
      for (const text of [res.stdout, res.stderr, metrics]) expect(text).not.toContain(SECRET);
    } finally {
      hook.status = 200;
    }
  }, 60_000);
});
