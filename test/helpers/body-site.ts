/**
 * The fake site of the large and endless body tests (test/e2e/endless-body.test.ts,
 * test/e2e/large-body.test.ts): one route answered by the test, every other
 * by the fake backend, and a snapshot run against it with its peak RSS.
 */
import { readFileSync } from 'node:fs';
import { http } from 'msw';
import type { RequestHandler } from 'msw';
import { createFakeBackend, ALL_TYPES_TOKEN } from '../fake/backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { startCli } from './run-cli.js';

export const TOKEN = ALL_TYPES_TOKEN.value;

/** The fake site with `answer` for GET `route`; `sent` counts the bytes the answer hands to the server. */
export async function startBodySite(
  answer: (sent: { bytes: number }) => Response,
  route = '/api/users',
): Promise<{ server: FakeServer; url: string; sent: { bytes: number } }> {
  const handlers: RequestHandler[] = [];
  const server = await startFakeServer(handlers, { tls: true });
  const sent = { bytes: 0 };
  handlers.push(
    http.get(`${server.url}${route}`, () => answer(sent)),
    ...createFakeBackend({ baseUrl: server.url }).handlers,
  );
  return { server, url: server.url, sent };
}

/** Peak resident memory of a running process (VmHWM), in bytes; undefined once it is gone. */
function peakRss(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The snapshot run against `url` (no retries), its peak RSS sampled from /proc until it ends. */
export async function snapshotWithPeak(url: string, out: string, extra: string[] = []) {
  const { child, result } = startCli(
    [
      '--base-url',
      url,
      '--ca-file',
      getTestCerts().caFile,
      '--out-dir',
      out,
      '--retries',
      '0',
      '--timeout',
      '120',
      ...extra,
    ],
    { env: { SVC_TOKEN: TOKEN } },
  );
  let peak = 0;
  const sample = () => (peak = Math.max(peak, peakRss(child.pid!) ?? 0));
  const timer = setInterval(sample, 50);
  const res = await result.finally(() => clearInterval(timer));
  return { ...res, peak };
}
