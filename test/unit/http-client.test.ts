import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { constants as bufferConstants } from 'node:buffer';
import { Agent, EnvHttpProxyAgent } from 'undici';
import {
  BodyTooLargeError,
  createDispatcher,
  HttpClient,
  isRetryableStatus,
  parseRetryAfter,
  readBody as readBodyTo,
  readStart,
} from '../../src/http/client.js';
import { BodyFile } from '../../src/body/file.js';
import { HttpError } from '../../src/http/errors.js';
import { FailedError } from '../../src/errors.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';

let site: FakeSite;
let ca: string[];
beforeAll(async () => {
  site = await startFakeSite();
  ca = [...rootCertificates, readFileSync(site.caFile, 'utf8')];
});
afterAll(async () => site.close());

function client(opts: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  return new HttpClient({
    timeoutMs: 5000,
    retries: 3,
    concurrency: 2,
    ca,
    userAgent: 'test',
    backoffBaseMs: 10,
    ...opts,
  });
}

const cookie = { cookie: `SVC_TOKEN=${ALL_TYPES_TOKEN.value}` };

describe('createDispatcher', () => {
  // It loads only the parts of undici it uses, by their paths in the package: these hold them to its exports.
  const opts = { concurrency: 1, ca: undefined, timeoutMs: 1000 };

  it("makes undici's own Agent, with the request API", async () => {
    const d = createDispatcher(opts);
    expect(d).toBeInstanceOf(Agent);
    expect(typeof d.request).toBe('function');
    await d.close();
  });

  it("makes undici's own EnvHttpProxyAgent when a proxy is set", async () => {
    const before = process.env.HTTPS_PROXY;
    process.env.HTTPS_PROXY = 'http://127.0.0.1:9';
    try {
      const d = createDispatcher(opts);
      expect(d).toBeInstanceOf(EnvHttpProxyAgent);
      await d.close();
    } finally {
      if (before === undefined) delete process.env.HTTPS_PROXY;
      else process.env.HTTPS_PROXY = before;
    }
  });
});

describe('HttpClient', () => {
  it('returns the exact bytes the server sent', async () => {
    const c = client();
    const res = await c.read({ label: 'GET /api/users', url: `${site.url}/api/users`, headers: cookie });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(site.backend.responseBody('users'));
    expect(res.attempts).toBe(1);
    await c.close();
  });

  it('returns 4xx answers other than 429 at once, without retrying', async () => {
    const c = client();
    const before = site.backend.requests.length;
    const res = await c.read({
      label: 'GET /api/users',
      url: `${site.url}/api/users`,
      headers: { cookie: 'SVC_TOKEN=fake-token-unknown' },
    });
    expect(res.status).toBe(401);
    expect(res.attempts).toBe(1);
    expect(site.backend.requests.length - before).toBe(1);
    await c.close();
  });

  it('retries 5xx until the attempts run out, then throws an HttpError with the last status', async () => {
    site.backend.setFault('teams', { statuses: [502], always: true });
    const c = client({ retries: 2 });
    const err = await c
      .read({ label: 'GET /api/teams', url: `${site.url}/api/teams`, headers: cookie })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 502, attempts: 3, route: 'GET /api/teams', kind: 'status' });
    expect((err as HttpError).message).toMatch(/^GET \/api\/teams: HTTP 502 after 3 attempts/);
    site.backend.clearFaults();
    await c.close();
  });

  it('honours Retry-After', async () => {
    site.backend.setFault('drives', { statuses: [429], retryAfter: '1' });
    const c = client();
    // Order, not elapsed time: with a 10 ms backoff the retry would beat a
    // 500 ms timer; honouring Retry-After: 1 puts it after.
    const arrived: string[] = [];
    const pending = c
      .read({ label: 'GET /api/drives', url: `${site.url}/api/drives`, headers: cookie })
      .then((r) => (arrived.push('response'), r));
    await new Promise((resolve) => setTimeout(resolve, 500)).then(() => arrived.push('timer'));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.attempts).toBe(2);
    expect(arrived).toEqual(['timer', 'response']);
    await c.close();
  });

  it('reports status 0 and a timeout when no complete response comes in time', async () => {
    site.backend.setFault('projects', { delayMs: 1500 });
    const c = client({ timeoutMs: 300, retries: 0 });
    const err = await c
      .read({ label: 'GET /api/projects', url: `${site.url}/api/projects`, headers: cookie })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, kind: 'timeout', attempts: 1 });
    site.backend.clearFaults();
    await c.close();
  });

  it('refuses a server its trust store does not cover, naming --ca-file, without retrying', async () => {
    const c = client({ ca: [...rootCertificates] });
    const err = await c
      .read({ label: 'GET /api/users', url: `${site.url}/api/users`, headers: cookie })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, kind: 'tls', attempts: 1 });
    expect((err as Error).message).toMatch(/--ca-file/);
    await c.close();
  });

  // The audit collection aborts its other requests with the error of the one that failed; undici rejects with it.
  it.each([
    ['with no reason', undefined],
    ["with another request's FailedError as the reason", new FailedError('GET /tags/list: HTTP 500')],
  ])('stops at once, cancelled and not failed, when its run is aborted %s', async (_, reason) => {
    site.backend.setFault('users', { delayMs: 3000 });
    const abort = new AbortController();
    const c = client({ signal: abort.signal });
    const pending = c
      .read({ label: 'GET /api/users', url: `${site.url}/api/users`, headers: cookie })
      .catch((e: unknown) => e);
    setTimeout(() => abort.abort(reason), 100);
    // Not waited out: a request that ignored the abort would end with the delayed 200, not 'aborted'.
    const err = await pending;
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ kind: 'aborted' });
    site.backend.clearFaults();
    await c.close();
  });
});

describe('retry rules', () => {
  it('retries 429 and 5xx only', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([200, 400, 401, 403, 404, 422].some(isRetryableStatus)).toBe(false);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-21T02:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 02:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 01:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('readBody', () => {
  async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
    for (const p of parts) yield Buffer.from(p);
  }
  /** readBody held in memory, without a limit of its own. */
  const readBody = (body: AsyncIterable<Buffer>, length: string | string[] | undefined) =>
    readBodyTo(body, length, { maxBytes: Number.MAX_SAFE_INTEGER }) as Promise<Buffer>;

  it('reads a body announced over 512 MB into the one buffer of its announced size, not chunks joined at the end', async () => {
    // Only the bytes received touch memory: the rest of the 600 MB is never written.
    const announced = 600 * 1024 * 1024;
    const body = await readBody(chunks('[{"id"', ':1},', '{"id":2}]'), String(announced));
    expect(body.toString()).toBe('[{"id":1},{"id":2}]');
    expect(body.buffer.byteLength).toBe(announced);
  });

  it('keeps every byte of a body longer than announced, shorter than announced, or without a length', async () => {
    expect((await readBody(chunks('abc', 'def', 'gh'), '5')).toString()).toBe('abcdefgh');
    expect((await readBody(chunks('abc'), '10')).toString()).toBe('abc');
    expect((await readBody(chunks('abc', 'def'), undefined)).toString()).toBe('abcdef');
    expect((await readBody(chunks(), '0')).toString()).toBe('');
  });

  it('reads as chunks a length no buffer can hold, or one that is not a plain number', async () => {
    for (const length of [String(bufferConstants.MAX_LENGTH + 1), '12abc', '-1', ['3', '3']]) {
      const body = await readBody(chunks('abc', 'def'), length);
      expect(body.toString(), String(length)).toBe('abcdef');
      expect(body.buffer.byteLength, String(length)).toBeLessThan(1024 * 1024);
    }
  });

  /** A body without end, counting the chunks taken from it and whether it was let go. */
  function endless(chunk: string) {
    const seen = { chunks: 0, closed: false };
    async function* body(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          seen.chunks++;
          yield Buffer.from(chunk);
        }
      } finally {
        seen.closed = true;
      }
    }
    return { body: body(), seen };
  }

  it('refuses a body announced over the limit before reading any of it', async () => {
    const { body, seen } = endless('[1,');
    await expect(readBodyTo(body, '11', { maxBytes: 10 })).rejects.toBeInstanceOf(BodyTooLargeError);
    const huge = readBodyTo(body, '99999999999999999999999', { maxBytes: Number.MAX_SAFE_INTEGER });
    await expect(huge).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(seen.chunks).toBe(0);
  });

  it('refuses a body that grows past the limit, in memory or on its way to the spool', async () => {
    const inMemory = endless('[1,');
    await expect(readBodyTo(inMemory.body, undefined, { maxBytes: 30 })).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(inMemory.seen.chunks).toBe(11);
    const written: string[] = [];
    const spool = {
      async write(_label: string, c: AsyncIterable<Buffer>): Promise<BodyFile> {
        for await (const b of c) written.push(b.toString());
        throw new Error('not reached');
      },
    };
    const spooled = endless('[1,');
    const read = readBodyTo(spooled.body, undefined, { maxBytes: 30, spool, memoryBytes: 6 });
    await expect(read).rejects.toBeInstanceOf(BodyTooLargeError);
    // Never more than 30 bytes taken in: 10 chunks written, the 11th refused.
    expect(written.join('')).toBe('[1,'.repeat(10));
  });

  it('hands a body past the memory bound to the spool, every byte in order, holding no more than that bound', async () => {
    const parts = ['[1', ',2', ',3', ',4', ',5', ']'];
    let heldWhenSpooled = -1;
    let taken = 0;
    async function* body(): AsyncGenerator<Buffer> {
      for (const p of parts) {
        taken++;
        yield Buffer.from(p);
      }
    }
    const file = new BodyFile('/nowhere', 'x.json', 11, 'f'.repeat(64));
    const spool = {
      async write(_label: string, c: AsyncIterable<Buffer>): Promise<BodyFile> {
        heldWhenSpooled = taken;
        let text = '';
        for await (const b of c) text += b.toString();
        expect(text).toBe(parts.join(''));
        return file;
      },
    };
    expect(await readBodyTo(body(), undefined, { maxBytes: 100, spool, memoryBytes: 5 })).toBe(file);
    // The spool took over once 6 bytes (3 chunks) were in: the rest came through it.
    expect(heldWhenSpooled).toBe(3);
    // A body within the bound stays in memory.
    const small = await readBodyTo(body(), '11', { maxBytes: 100, spool, memoryBytes: 11 });
    expect(Buffer.isBuffer(small) && small.toString()).toBe('[1,2,3,4,5]');
  });

  it('keeps only the start of an error body and lets the rest go unread', async () => {
    const { body, seen } = endless('<html>');
    expect((await readStart(body, 10)).toString()).toBe('<html><htm');
    expect(seen.chunks).toBe(2);
    expect(seen.closed).toBe(true);
  });
});
