import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import type { RequestHandler } from 'msw';
import { createFakeBackend, ALL_TYPES_TOKEN } from '../fake/backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { runCli, startCli, tmpDir } from '../helpers/run-cli.js';
import { leftovers } from '../helpers/assert-output.js';
import { LARGE_BODY_BYTES, MAX_BODY_BYTES } from '../../src/body/file.js';

/**
 * A server that answers GET /api/users with a body that never ends, as fast
 * as the client takes it (a hostile or broken server): the run must keep its
 * memory bounded while the body streams to disk, and fail the route once it
 * passes MAX_BODY_BYTES, without quoting it. Every other route is the fake
 * backend's.
 */

const TOKEN = ALL_TYPES_TOKEN.value;
/** One record, repeated: what the endless array is made of (never to be seen in a message). */
const RECORD = '{"id":"endless-user","name":"endless-body-marker"},';
const CHUNK = Buffer.from(RECORD.repeat(Math.ceil((1024 * 1024) / RECORD.length)));
/** Far above what the run holds in memory, far below what it is sent. */
const RSS_BOUND_BYTES = 400 * 1024 * 1024;

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The fake site with `users` answering for GET /api/users; `sent` counts the bytes handed to the server. */
async function startSite(users: (sent: { bytes: number }) => Response) {
  const handlers: RequestHandler[] = [];
  server = await startFakeServer(handlers, { tls: true });
  const sent = { bytes: 0 };
  handlers.push(
    http.get(`${server.url}/api/users`, () => users(sent)),
    ...createFakeBackend({ baseUrl: server.url }).handlers,
  );
  return { url: server.url, sent };
}

/** `[` and then the same records without end, a chunk each time the stream is asked for more (backpressure). */
function endless(sent: { bytes: number }, headers: Record<string, string> = {}): Response {
  let first = true;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = first ? Buffer.concat([Buffer.from('['), CHUNK]) : CHUNK;
      first = false;
      sent.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return new HttpResponse(stream, { status: 200, headers: { 'content-type': 'application/json', ...headers } });
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

/** The snapshot run against `url`, its peak RSS sampled from /proc until it ends. */
async function snapshot(url: string, out: string, extra: string[] = []) {
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

describe('a response body that never ends', () => {
  it('streams to disk with memory bounded, then fails the route past the limit (exit 1, nothing published)', async () => {
    const site = await startSite((sent) => endless(sent));
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshot(site.url, out);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(
      `GET /api/users: the answer of GET /api/users was larger than 1 GiB, the most this tool reads of one response`,
    );
    expect(res.stderr).toContain('1 route failed, so the snapshot would be incomplete; nothing was published');
    // Nothing of the body quoted.
    expect(res.stderr).not.toContain('endless');
    // More than the limit was sent; the process never held anything like it.
    expect(site.sent.bytes).toBeGreaterThan(MAX_BODY_BYTES);
    expect(res.peak).toBeGreaterThan(0);
    expect(res.peak).toBeLessThan(RSS_BOUND_BYTES);
    // Neither the output nor the spool beside it is left.
    expect(existsSync(out)).toBe(false);
    expect(leftovers(parent)).toEqual([]);
  }, 120_000);

  it('fails the route at once when the length announced is over the limit, before reading the body', async () => {
    const site = await startSite((sent) => endless(sent, { 'content-length': String(MAX_BODY_BYTES + 1) }));
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshot(site.url, out);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('the answer of GET /api/users was larger than 1 GiB');
    expect(site.sent.bytes).toBeLessThan(MAX_BODY_BYTES / 8);
    expect(existsSync(out)).toBe(false);
    expect(leftovers(parent)).toEqual([]);
  }, 60_000);

  it('keeps a large body that ends (over the memory bound) byte for byte, built from and in raw/, with no spool left', async () => {
    // Records of 10 KB each, together past LARGE_BODY_BYTES: the body goes through the spool.
    const record = (i: number) => JSON.stringify({ id: `u${i}`, username: `user${i}`, note: 'n'.repeat(10_000) });
    const count = Math.ceil((LARGE_BODY_BYTES + 1024 * 1024) / record(0).length);
    const body = Buffer.from(`[${Array.from({ length: count }, (_, i) => record(i)).join(',')}]`);
    const site = await startSite(() => new HttpResponse(body, { headers: { 'content-type': 'application/json' } }));
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshot(site.url, out, ['--raw']);
    expect(res.code, res.stderr).toBe(0);
    const raw = readFileSync(join(out, 'raw', 'api-users.json'));
    expect(raw.equals(body)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8'));
    const users = manifest.routes.find((r: { route: string }) => r.route === 'GET /api/users');
    expect(users).toMatchObject({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    expect(readdirSync(out).some((f) => f.startsWith(`${count}-users (`))).toBe(true);
    expect(res.peak).toBeLessThan(RSS_BOUND_BYTES + body.length);
    expect(leftovers(parent)).toEqual([]);
    // collect: the same bytes, copied from the spool into the collection.
    const collected = join(parent, 'raw');
    const c = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', getTestCerts().caFile, '--out-dir', collected],
      {
        env: { SVC_TOKEN: TOKEN },
      },
    );
    expect(c.code, c.stderr).toBe(0);
    expect(readFileSync(join(collected, 'api-users.json')).equals(body)).toBe(true);
    expect(leftovers(parent)).toEqual([]);
  }, 120_000);
});
