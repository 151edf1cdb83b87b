import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { startPingReceiver, type PingReceiver, type ReceivedPing } from '../helpers/ping-receiver.js';
import { REPO_ROOT, runCli, startCli, tmpDir, stderrSeen } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { getUntrustedCerts } from '../fake/certs.js';

// --ping-url end to end (CONTRACT section 12): a healthchecks-style receiver
// over real HTTPS with the test CA, recording what each ping carries.
const TOKEN = ALL_TYPES_TOKEN.value;
const CHECK = '/ping/5f1c0c5e-8a7e-4b52-9a55-0d6c3e2b7f10';
let site: FakeSite;
let receiver: PingReceiver;
beforeAll(async () => {
  site = await startFakeSite();
  receiver = await startPingReceiver(() => site.backend.requests.length);
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.status = 200;
  receiver.delayMs = 0;
  site.backend.clearFaults();
});
afterAll(async () => {
  await receiver.close();
  await site.close();
});

/**
 * The backend's request count once it stops moving: a request of an earlier
 * test is recorded when its handler answers, which on a loaded machine can
 * fall after that test's process has exited.
 */
async function settledCount(count: () => number): Promise<number> {
  let last = count();
  for (let stable = 0; stable < 3;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = count();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

function run(args: string[], env: Record<string, string | undefined> = { SVC_TOKEN: TOKEN }) {
  const dir = tmpDir();
  return runCli(
    [
      'snapshot',
      '--base-url',
      site.url,
      '--ca-file',
      site.caFile,
      '--retries',
      '0',
      '--out-dir',
      join(dir, 'out'),
      ...args,
    ],
    { env, cwd: dir },
  );
}

/** The token in every encoding a request could carry it, and data only the site has. */
function forbidden(): string[] {
  const t = TOKEN;
  const siteData = [
    site.url,
    `:${new URL(site.url).port}`,
    ...site.backend.dataset.users.slice(0, 5).flatMap((u) => [u.email, u.id]),
  ];
  return [
    t,
    encodeURIComponent(t),
    Buffer.from(t).toString('base64'),
    Buffer.from(t).toString('base64url'),
    Buffer.from(t).toString('hex'),
    JSON.stringify(t).slice(1, -1),
    Buffer.from(`SVC_TOKEN=${t}`).toString('base64'),
    ...siteData,
  ];
}

function expectClean(pings: ReceivedPing[]): void {
  for (const p of pings) {
    const text = [p.method, p.path, JSON.stringify(p.headers), p.body].join('\n');
    for (const f of forbidden()) expect(text.includes(f), `ping ${p.path} carries ${f.slice(0, 6)}…`).toBe(false);
    expect(Object.keys(p.headers).filter((h) => !['host', 'user-agent', 'connection'].includes(h))).toEqual([]);
    expect(p.headers.cookie).toBeUndefined();
  }
}

describe('--ping-url', () => {
  it('pings /start before the first API request and the URL itself on success, carrying nothing from the run', async () => {
    const before = await settledCount(() => site.backend.requests.length);
    const res = await run(['--ping-url', `${receiver.url}${CHECK}`]);
    expect(res.code).toBe(0);
    expect(receiver.received.map((p) => `${p.method} ${p.path}`)).toEqual([`GET ${CHECK}/start`, `GET ${CHECK}`]);
    expect(receiver.received[0]!.probe).toBe(before);
    expect(receiver.received[1]!.probe).toBeGreaterThan(before);
    expectClean(receiver.received);
  });

  it("pings /fail when the run fails, and the exit code is the run's", async () => {
    const rejected = await run(['--ping-url', `${receiver.url}${CHECK}/`], { SVC_TOKEN: 'a-token-the-site-refuses' });
    expect(rejected.code).toBe(3);
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, `${CHECK}/fail`]);
    receiver.received.length = 0;
    site.backend.setFault('drives', { statuses: [500], always: true });
    const partial = await run(['--ping-url', `${receiver.url}${CHECK}`, '--allow-partial']);
    expect(partial.code).toBe(4);
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, `${CHECK}/fail`]);
    expectClean(receiver.received);
  });

  it('pings /fail on SIGTERM before exiting 143', async () => {
    site.backend.setFault('drives', { delayMs: 20_000 });
    const dir = tmpDir();
    const { child, result } = startCli(
      [
        'snapshot',
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--ping-url',
        `${receiver.url}${CHECK}`,
        '--out-dir',
        join(dir, 'out'),
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
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, `${CHECK}/fail`]);
    expectClean(receiver.received);
  });

  it('SIGTERM while the success ping waits: the metrics file says 143, as the exit code does', async () => {
    const dir = tmpDir();
    const metrics = join(dir, 'svc.prom');
    receiver.delayMs = 20_000;
    const { child, result } = startCli(
      [
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
        '--out-dir',
        join(dir, 'out'),
        '--ca-file',
        site.caFile,
        '--timeout',
        '30',
        '--ping-url',
        `${receiver.url}${CHECK}`,
        '--metrics-file',
        metrics,
      ],
      { cwd: dir },
    );
    for (let i = 0; i < 600 && !receiver.received.some((p) => p.path === CHECK); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received.map((p) => p.path)).toContain(CHECK);
    child.kill('SIGTERM');
    const res = await result;
    expect(res.code).toBe(143);
    expect(readFileSync(metrics, 'utf8')).toMatch(/^svc_snapshot_exit_code\{[^}]*\} 143$/m);
  });

  it('a receiver that fails, refuses or is not trusted only causes a warning', async () => {
    receiver.status = 500;
    const refused = await run(['--ping-url', `${receiver.url}${CHECK}`]);
    expect(refused.code).toBe(0);
    expect(refused.stderr).toMatch(/warning: ping "start" to 127\.0\.0\.1:\d+ was answered with status 500/);
    // The check's key (the path) is not repeated in messages.
    expect(refused.stderr).not.toContain(CHECK);

    const untrusted = await startPingReceiver(() => 0, getUntrustedCerts());
    try {
      const res = await run(['--ping-url', `${untrusted.url}${CHECK}`]);
      expect(res.code).toBe(0);
      expect(res.stderr).toMatch(/warning: ping "start" to 127\.0\.0\.1:\d+ failed \(/);
      // TLS is verified: the untrusted receiver never saw a request, not even
      // with the variable that turns verification off elsewhere in Node.
      const insecure = await run(['--ping-url', `${untrusted.url}${CHECK}`], {
        SVC_TOKEN: TOKEN,
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
      });
      expect(insecure.stderr).toMatch(/warning: ping "success" to 127\.0\.0\.1:\d+ failed \(/);
      expect(untrusted.received).toEqual([]);
    } finally {
      await untrusted.close();
    }

    const closedPort = await run(['--ping-url', 'https://127.0.0.1:9/ping']);
    expect(closedPort.code).toBe(0);
    expect(closedPort.stderr).toMatch(/warning: ping "success" to 127\.0\.0\.1:9 failed/);
  });

  it('trusts NODE_EXTRA_CA_CERTS too, and pings around a replay that talks to no site', async () => {
    const dir = tmpDir();
    const res = await runCli(
      [
        'snapshot',
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
        '--out-dir',
        join(dir, 'out'),
        '--ping-url',
        `${receiver.url}${CHECK}`,
      ],
      {
        env: { NODE_EXTRA_CA_CERTS: site.caFile },
        cwd: dir,
      },
    );
    expect(res.code).toBe(0);
    expect(res.stderr).not.toMatch(/warning: ping/);
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, CHECK]);
  });

  it('gives up on a receiver that does not answer, warns, and finishes the run', async () => {
    receiver.delayMs = 60_000;
    // The ping's timeout is 5 s, or --timeout when that is shorter. Not a
    // shorter --timeout here: it would hold the API requests to it as well,
    // which a busy machine may not answer within a second.
    const res = await run(['--ping-url', `${receiver.url}${CHECK}`, '--json']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).complete).toBe(true);
    expect(res.stderr).toMatch(/warning: ping "start" to 127\.0\.0\.1:\d+ failed \(/);
    expect(res.stderr).toMatch(/warning: ping "success" to 127\.0\.0\.1:\d+ failed \(/);
  });

  it.each([
    ['http://hc-ping.example.org/abc', /unencrypted/],
    ['https://user:s3cr3t-pw@127.0.0.1/abc', /must not contain a user name or password/],
    ['ftp://127.0.0.1/abc', /must start with https:\/\//],
    ['not a url', /is not a URL/],
  ])('refuses --ping-url %s as a usage error, before any request, without echoing a password', async (url, message) => {
    // A site of its own: a delayed answer to an earlier test's killed run
    // (drives held for 20 s) would be counted on the shared one.
    const own = await startFakeSite();
    try {
      const dir = tmpDir();
      const res = await runCli(
        [
          'snapshot',
          '--base-url',
          own.url,
          '--ca-file',
          own.caFile,
          '--retries',
          '0',
          '--out-dir',
          join(dir, 'out'),
          '--ping-url',
          url,
        ],
        { env: { SVC_TOKEN: TOKEN }, cwd: dir },
      );
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toContain('s3cr3t-pw');
      expect(own.backend.requests).toEqual([]);
      expect(receiver.received).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('takes the URL from SVC_PING_URL (no other cron option needed); an empty SVC_PING_URL or --ping-url is off, as an unset one', async () => {
    const res = await run(['--quiet'], { SVC_TOKEN: TOKEN, SVC_PING_URL: `${receiver.url}${CHECK}` });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, CHECK]);
    expectClean(receiver.received);
    receiver.received.length = 0;
    const empty = await run(['--quiet'], { SVC_TOKEN: TOKEN, SVC_PING_URL: '' });
    expect(empty).toMatchObject({ code: 0, stderr: '' });
    expect(receiver.received).toEqual([]);
    // An empty --ping-url is unset as well (CONTRACT section 2), not a bad URL.
    expect(await run(['--quiet', '--ping-url', ''])).toMatchObject({ code: 0, stderr: '' });
    expect(receiver.received).toEqual([]);
    // The flag wins over the variable, as for every option that is not a secret.
    const flag = await run(['--quiet', '--ping-url', `${receiver.url}${CHECK}/flag`], {
      SVC_TOKEN: TOKEN,
      SVC_PING_URL: 'not a url',
    });
    expect(flag).toMatchObject({ code: 0, stderr: '' });
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/flag/start`, `${CHECK}/flag`]);
  });

  it('refuses a bad SVC_PING_URL as a usage error naming the variable', async () => {
    const res = await run([], { SVC_TOKEN: TOKEN, SVC_PING_URL: 'ftp://127.0.0.1/abc' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/SVC_PING_URL/);
    expect(receiver.received).toEqual([]);
  });
});
