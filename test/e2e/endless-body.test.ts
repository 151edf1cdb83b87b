import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HttpResponse } from 'msw';
import { getTestCerts } from '../fake/certs.js';
import type { FakeServer } from '../fake/server.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { leftovers } from '../helpers/assert-output.js';
import { snapshotWithPeak, startBodySite, TOKEN } from '../helpers/body-site.js';
import { LARGE_BODY_BYTES, MAX_BODY_BYTES, MAX_MEMORY_BODY_BYTES } from '../../src/body/file.js';

/**
 * A server that answers one route with a body that does not end, as fast as
 * the client takes it (a hostile or broken server): the run must keep its
 * memory bounded while the body streams to disk, well past the most held in
 * memory (MAX_MEMORY_BODY_BYTES); a length announced over MAX_BODY_BYTES is
 * refused unread. A body growing past MAX_BODY_BYTES (16 GiB, too much to
 * send in a test) is test/unit/http-client.test.ts's, with a small limit.
 * Every other route is the fake backend's.
 */

/** One record, repeated: what the endless array is made of (never to be seen in a message). */
const RECORD = '{"id":"endless-user","name":"endless-body-marker"},';
const CHUNK = Buffer.from(RECORD.repeat(Math.ceil((1024 * 1024) / RECORD.length)));
/** Far above what the run holds in memory, far below what it is sent. */
const RSS_BOUND_BYTES = 400 * 1024 * 1024;
/** What the endless body sends before its connection is cut: well past the most a body held in memory may be. */
const CUT_AFTER_BYTES = MAX_MEMORY_BODY_BYTES + 256 * 1024 * 1024;

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function startSite(answer: (sent: { bytes: number }) => Response, route?: string) {
  const site = await startBodySite(answer, route);
  server = site.server;
  return site;
}

/**
 * `[` and then the same records, a chunk each time the stream is asked for
 * more (backpressure); once `cutAfter` bytes are sent, the stream fails and
 * the fake server destroys the connection mid-body.
 */
function endless(sent: { bytes: number }, headers: Record<string, string> = {}, cutAfter = Infinity): Response {
  let first = true;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent.bytes >= cutAfter) {
        controller.error(new Error('the test cuts the connection'));
        return;
      }
      const chunk = first ? Buffer.concat([Buffer.from('['), CHUNK]) : CHUNK;
      first = false;
      sent.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return new HttpResponse(stream, { status: 200, headers: { 'content-type': 'application/json', ...headers } });
}

describe('a response body that never ends', () => {
  it('streams to disk with memory bounded well past the in-memory limit, then fails as incomplete when cut', async () => {
    const site = await startSite((sent) => endless(sent, {}, CUT_AFTER_BYTES));
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshotWithPeak(site.url, out);
    expect(res.code, res.stderr).toBe(1);
    // Not refused at the in-memory limit: read until the connection was cut, then an incomplete answer.
    expect(res.stderr).toMatch(/GET \/api\/users: [^\n]*closed/);
    expect(res.stderr).not.toContain('larger than');
    expect(res.stderr).toContain('1 route failed, so the snapshot would be incomplete; nothing was published');
    // Nothing of the body quoted.
    expect(res.stderr).not.toContain('endless');
    // Well over a body held in memory was sent; the process never held anything like it.
    expect(site.sent.bytes).toBeGreaterThanOrEqual(CUT_AFTER_BYTES);
    expect(res.peak).toBeGreaterThan(0);
    expect(res.peak).toBeLessThan(RSS_BOUND_BYTES);
    // Neither the output nor the spool beside it (the partial body in it) is left.
    expect(existsSync(out)).toBe(false);
    expect(leftovers(parent)).toEqual([]);
  }, 120_000);

  it('fails the route at once when the length announced is over the limit, before reading the body', async () => {
    const site = await startSite((sent) => endless(sent, { 'content-length': String(MAX_BODY_BYTES + 1) }));
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshotWithPeak(site.url, out);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(
      'GET /api/users: the answer of GET /api/users was larger than 16 GiB, the most this tool reads of one response',
    );
    expect(res.stderr).toContain('1 route failed, so the snapshot would be incomplete; nothing was published');
    expect(res.stderr).not.toContain('endless');
    expect(site.sent.bytes).toBeLessThan(LARGE_BODY_BYTES);
    expect(existsSync(out)).toBe(false);
    expect(leftovers(parent)).toEqual([]);
  }, 60_000);

  it('holds a body in memory (check) only up to the in-memory limit, which a snapshot is not held to', async () => {
    // Announced 2 GiB, cut after a few MB: check refuses it unread; a snapshot starts reading it.
    const announced = { 'content-length': String(2 * MAX_MEMORY_BODY_BYTES) };
    const site = await startSite((sent) => endless(sent, announced, 4 * 1024 * 1024), '/api/drives');
    const ca = ['--base-url', site.url, '--ca-file', getTestCerts().caFile];
    const check = await runCli(['check', ...ca], { env: { SVC_TOKEN: TOKEN } });
    expect(check.code, check.stdout + check.stderr).toBe(1);
    expect(check.stdout).toContain(
      'the answer of GET /api/drives was larger than 1 GiB, the most this tool holds in memory of one response',
    );
    expect(check.stdout).toContain('A snapshot or collect writes a body that large to disk');
    // An answer too large is this token's error for the route, not an unreachable host.
    expect(check.stdout).toContain('reachable: yes');
    expect(check.stdout).toContain('NOT OK');
    expect(site.sent.bytes).toBeLessThan(LARGE_BODY_BYTES);
    const parent = tmpDir();
    const res = await snapshotWithPeak(site.url, join(parent, 'snap'));
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/GET \/api\/drives: [^\n]*closed/);
    expect(res.stderr).not.toContain('larger than');
    expect(leftovers(parent)).toEqual([]);
  }, 60_000);
});
