import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, connect, type Server } from 'node:net';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets } from '../helpers/assert-output.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';

// A minimal CONNECT proxy on 127.0.0.1 that records the tunnels it opens.
// TLS runs inside the tunnel, end to end between the CLI and the fake backend.
let proxy: Server;
let proxyUrl: string;
const tunnels: string[] = [];
let site: FakeSite;

beforeAll(async () => {
  site = await startFakeSite();
  proxy = createServer((client) => {
    client.once('data', (head) => {
      const line = head.toString('latin1').split('\r\n')[0] ?? '';
      const m = /^CONNECT (127\.0\.0\.1):(\d+) HTTP\/1\.1$/.exec(line);
      if (!m) {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      tunnels.push(`${m[1]}:${m[2]}`);
      const upstream = connect(Number(m[2]), m[1]!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
});

afterAll(async () => {
  await site.close();
  await new Promise((resolve) => proxy.close(resolve));
});

describe('HTTPS_PROXY', () => {
  it('tunnels every request through the proxy, with TLS verified end to end', async () => {
    const out = join(tmpDir(), 'raw');
    const res = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out], {
      env: { SVC_TOKEN: ALL_TYPES_TOKEN.value, HTTPS_PROXY: proxyUrl },
    });
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([site.url.replace('https://', '')]));
    expectNoSecrets([ALL_TYPES_TOKEN.value], [out], [res.stdout, res.stderr]);
  });

  it('bypasses the proxy for hosts in NO_PROXY', async () => {
    tunnels.length = 0;
    const out = join(tmpDir(), 'raw');
    const res = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out], {
      env: { SVC_TOKEN: ALL_TYPES_TOKEN.value, HTTPS_PROXY: proxyUrl, NO_PROXY: '127.0.0.1' },
    });
    expect(res.code).toBe(0);
    expect(tunnels).toEqual([]);
  });
});
