import { constants as bufferConstants } from 'node:buffer';
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSecureContext } from 'node:tls';
import { HttpError, describeTransportError, type ProxyInUse } from './errors.js';
import { httpsProxy } from '../config/proxy.js';
import { withoutUserinfo } from '../config/url.js';
import { escapeControl } from '../util/escape.js';
import { bodyHint } from './body-hint.js';
import { TOOL } from '../version.js';
import { FailedError } from '../errors.js';
import { LARGE_BODY_BYTES, MAX_BODY_BYTES, MAX_MEMORY_BODY_BYTES, type Body, type BodyFile } from '../body/file.js';

export interface TransportOptions {
  readonly timeoutMs: number;
  readonly retries: number;
  readonly concurrency: number;
  readonly ca: readonly string[] | undefined;
  readonly userAgent: string;
  /** Aborts every request in flight (interruption, a refused token). */
  readonly signal?: AbortSignal;
  /** First backoff step; doubled each attempt, with jitter. */
  readonly backoffBaseMs?: number;
  /** Longest wait before a retry, Retry-After included. */
  readonly backoffMaxMs?: number;
}

export interface ReadRequest {
  /** `GET /api/users`: the route as reported; never holds a token. */
  readonly label: string;
  /** Absolute URL. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** GET unless set; POST only for reads (the audit service's queries), so retrying it is safe. */
  readonly method?: 'GET' | 'POST';
  /** Request body (POST), sent unchanged on every attempt. */
  readonly body?: string | Buffer;
}

/** Where a 200 body longer than `memoryBytes` (LARGE_BODY_BYTES unless a test asks for less) is written as it arrives (src/collect/body-spool.ts). */
export interface Spool {
  readonly memoryBytes?: number;
  write(label: string, chunks: AsyncIterable<Buffer>): Promise<BodyFile>;
}

export interface Fetched<B extends Body = Buffer> {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body exactly as received: in memory, or (spooled) the file holding it. */
  readonly body: B;
  readonly attempts: number;
  readonly durationMs: number;
}

interface Answer<B extends Body> {
  type: 'answer';
  status: number;
  headers: Fetched['headers'];
  body: B;
}

interface Failure {
  type: 'failure';
  status: number;
  kind: HttpError['kind'];
  detail: string;
  cause?: unknown;
}

const RETRY_AFTER_CAP_MS = 60_000;

/** What is kept of a body other than a 200's: only its start is ever shown (bodyHint), so an endless error page costs nothing. */
const ERROR_BODY_BYTES = 64 * 1024;

/** A body longer than MAX_BODY_BYTES, or held in memory MAX_MEMORY_BODY_BYTES (or announced so): the request ends there, not retried. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The limit as said in a message: 1 GiB, 64 MiB, or bytes. */
function sizeShown(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
}

/** The longest Buffer this Node.js makes. */
const { MAX_LENGTH } = bufferConstants;

/** The two dispatchers this tool makes; every undici dispatcher has `request()`. */
interface UndiciParts {
  readonly Agent: typeof import('undici').Agent;
  readonly EnvHttpProxyAgent: typeof import('undici').EnvHttpProxyAgent;
}

/**
 * undici, loaded on first use (`--help`, `--replay` and `diff` never need
 * it), and only the parts used: its index.js also loads fetch, WebSocket,
 * caches and mocks (about 170 ms here, against 60 ms for these). What
 * index.js does to them is done here too: every dispatcher gets the request
 * API. The paths are those of the pinned version; test/unit/http-client.test.ts
 * fails if they stop giving the package's own classes.
 */
function undici(): UndiciParts {
  const require = createRequire(import.meta.url);
  const { prototype } = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
  if (!('request' in prototype)) Object.assign(prototype, require('undici/lib/api/index.js'));
  return {
    Agent: require('undici/lib/dispatcher/agent.js') as UndiciParts['Agent'],
    EnvHttpProxyAgent: require('undici/lib/dispatcher/env-http-proxy-agent.js') as UndiciParts['EnvHttpProxyAgent'],
  };
}

/** The proxy from the environment, for messages: never its credentials (those are refused anyway). */
function proxyInUse(protocol: string): ProxyInUse | undefined {
  const p = httpsProxy(process.env, protocol);
  if (!p) return undefined;
  try {
    const url = new URL(p.url);
    return {
      shown: escapeControl(withoutUserinfo(p.url)),
      variable: p.variable,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    };
  } catch {
    return undefined;
  }
}

/** 429 and 5xx are worth another attempt; other statuses are answers. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** Retry-After in seconds or as an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * One shared undici dispatcher per run: keep-alive, at most `concurrency`
 * connections per origin, TLS always verified (the `ca` option only adds
 * trust), and HTTPS_PROXY / HTTP_PROXY / NO_PROXY honoured.
 */
export function createDispatcher(opts: Pick<TransportOptions, 'concurrency' | 'ca' | 'timeoutMs'>): Dispatcher {
  // One secure context for every connection: given `ca` alone, each new socket
  // would parse the whole trust store again (~40 ms of CPU per connection).
  // rejectUnauthorized is spelled out on every TLS option set: left undefined,
  // Node takes it from NODE_TLS_REJECT_UNAUTHORIZED, and `0` there would turn
  // verification off for the backend, the proxy and the tunnelled connection.
  const tls = {
    ...(opts.ca ? { secureContext: createSecureContext({ ca: [...opts.ca] }) } : {}),
    rejectUnauthorized: true,
  };
  const common = {
    connections: opts.concurrency,
    keepAliveTimeout: 10_000,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connect: { ...tls, timeout: Math.min(opts.timeoutMs, 30_000) },
  };
  const { Agent, EnvHttpProxyAgent } = undici();
  if (!httpsProxy(process.env)) return new Agent(common);
  return new EnvHttpProxyAgent({ ...common, requestTls: tls, proxyTls: tls });
}

/**
 * GET with a deadline that covers headers and body, and retries with
 * exponential backoff and jitter on network errors, timeouts, 429 and 5xx.
 * Any other status is returned to the caller to decide on (404 skip, 401 stop).
 */
export class HttpClient {
  readonly dispatcher: Dispatcher;
  private readonly opts: TransportOptions;

  constructor(opts: TransportOptions, dispatcher?: Dispatcher) {
    this.opts = opts;
    this.dispatcher = dispatcher ?? createDispatcher(opts);
  }

  /**
   * A request that only reads (a GET, or a POST that only reads, such as the audit service's queries), with the
   * deadline and retries; its body held in memory, up to MAX_MEMORY_BODY_BYTES.
   */
  read(req: ReadRequest): Promise<Fetched> {
    return this.readInto(req, undefined) as Promise<Fetched>;
  }

  /** read(), a 200 body longer than LARGE_BODY_BYTES written to `spool` as it arrives instead of held in memory, up to MAX_BODY_BYTES. */
  readSpooled(req: ReadRequest, spool: Spool): Promise<Fetched<Body>> {
    return this.readInto(req, spool);
  }

  private async readInto(req: ReadRequest, spool: Spool | undefined): Promise<Fetched<Body>> {
    const started = performance.now();
    const maxAttempts = 1 + this.opts.retries;
    const host = new URL(req.url).host;
    let last: (Omit<Failure, 'type'> & { retryAfterMs?: number }) | undefined;
    let made = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      made = attempt;
      if (attempt > 1) await this.backoff(attempt - 1, last?.retryAfterMs);
      this.throwIfAborted(req, attempt - 1);
      const outcome = await this.once(req, host, spool);
      if (outcome.type === 'answer') {
        const encoding = unaskedEncoding(outcome.headers['content-encoding']);
        const refuse = (detail: string) =>
          new HttpError({ route: req.label, status: outcome.status, kind: 'status', attempts: attempt, detail });
        if (encoding !== undefined && outcome.status === 200) {
          // Refused, not decoded: the raw collection keeps bodies byte for byte as
          // the API answers them, and a body compressed unasked is a proxy or
          // server misconfiguration worth seeing rather than hiding.
          throw refuse(
            `the server sent the body compressed (Content-Encoding: ${encoding}) although the request asked ` +
              `for none (Accept-Encoding: identity); nothing of it was used. Turn off compression for this client on ` +
              `the server or proxy`,
          );
        }
        if (!isRetryableStatus(outcome.status) || attempt === maxAttempts) {
          if (isRetryableStatus(outcome.status))
            throw refuse(
              `HTTP ${outcome.status} after ${attempt} attempt${attempt > 1 ? 's' : ''}${bodyHint(outcome.body as Buffer)}`,
            );
          return {
            status: outcome.status,
            headers: outcome.headers,
            body: outcome.body,
            attempts: attempt,
            durationMs: Math.round(performance.now() - started),
          };
        }
        last = {
          status: outcome.status,
          kind: 'status',
          detail: `HTTP ${outcome.status}`,
          retryAfterMs: parseRetryAfter(outcome.headers['retry-after']),
        };
        continue;
      }
      last = outcome;
      // The same server sends the same endless body again: not retried.
      if (outcome.kind === 'tls' || outcome.kind === 'aborted' || outcome.kind === 'size') break;
    }
    this.throwIfAborted(req, made);
    const l = last!;
    throw new HttpError({
      route: req.label,
      status: l.status,
      kind: l.kind,
      attempts: made,
      cause: l.cause,
      detail:
        l.kind === 'tls' || l.kind === 'size' ? l.detail : `${l.detail} (after ${made} attempt${made > 1 ? 's' : ''})`,
    });
  }

  private throwIfAborted(req: ReadRequest, attempts: number): void {
    if (this.opts.signal?.aborted) {
      throw new HttpError({
        route: req.label,
        status: 0,
        kind: 'aborted',
        attempts,
        detail: 'cancelled',
        cause: this.opts.signal.reason,
      });
    }
  }

  private async once(req: ReadRequest, host: string, spool: Spool | undefined): Promise<Answer<Body> | Failure> {
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = this.opts.signal ? AbortSignal.any([deadline, this.opts.signal]) : deadline;
    try {
      // origin + path rather than a URL: a URL would be normalised, and a realm
      // id such as `..` (sent as %2E%2E) would silently address another route.
      const origin = new URL(req.url).origin;
      const res = await this.dispatcher.request({
        origin,
        path: req.url.slice(origin.length) || '/',
        method: req.method ?? 'GET',
        // identity: a compressed body is then something the server sent unasked (see get()).
        headers: {
          accept: 'application/json',
          'accept-encoding': 'identity',
          'user-agent': this.opts.userAgent,
          ...req.headers,
        },
        ...(req.body !== undefined ? { body: req.body } : {}),
        signal,
      });
      const length = res.headers['content-length'];
      let body: Body;
      try {
        body =
          res.statusCode === 200
            ? await readBody(res.body, length, {
                maxBytes: spool ? MAX_BODY_BYTES : MAX_MEMORY_BODY_BYTES,
                spool,
                ...(spool?.memoryBytes !== undefined ? { memoryBytes: spool.memoryBytes } : {}),
                label: req.label,
              })
            : await readStart(res.body, ERROR_BODY_BYTES);
      } catch (err) {
        // An abandoned body would keep its connection reading.
        res.body.destroy();
        throw err;
      }
      return { type: 'answer', status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      const failure = (f: Pick<Failure, 'kind' | 'detail'>): Failure => ({
        type: 'failure',
        status: 0,
        ...f,
        cause: err,
      });
      // Cancelled (another request failed, or a signal): undici rejects with the signal's reason, which may be that
      // request's FailedError; it is not this request's failure.
      if (this.opts.signal?.aborted) return failure({ kind: 'aborted', detail: 'cancelled' });
      // The disk full (or refused) under a spooled body: the run cannot go on, as for any output file.
      if (err instanceof FailedError) throw err;
      if (err instanceof BodyTooLargeError)
        return failure({ kind: 'size', detail: tooLarge(req.label, err.limit, spool !== undefined) });
      const timeout = `no complete response within ${this.opts.timeoutMs / 1000} s (--timeout)`;
      if (deadline.aborted) return failure({ kind: 'timeout', detail: timeout });
      return failure(describeTransportError(err, host, proxyInUse(new URL(req.url).protocol)));
    }
  }

  private async backoff(retry: number, retryAfterMs: number | undefined): Promise<void> {
    const base = this.opts.backoffBaseMs ?? 250;
    const max = this.opts.backoffMaxMs ?? 8_000;
    const exp = Math.min(max, base * 2 ** (retry - 1));
    // Full jitter in [exp/2, exp): spreads retries of parallel routes apart.
    let wait = exp / 2 + Math.random() * (exp / 2);
    if (retryAfterMs !== undefined) wait = Math.max(wait, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
    try {
      await sleep(wait, undefined, this.opts.signal ? { signal: this.opts.signal } : undefined);
    } catch {
      // aborted: the caller checks the signal
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/** `use` with a client of this tool's user agent (on `dispatcher`, the tests', when given), closed after it whatever happened. */
export async function withHttpClient<T>(
  opts: Omit<TransportOptions, 'userAgent'>,
  dispatcher: Dispatcher | undefined,
  use: (http: HttpClient) => Promise<T>,
): Promise<T> {
  const http = new HttpClient({ ...opts, userAgent: `${TOOL.name}/${TOOL.version}` }, dispatcher);
  try {
    return await use(http);
  } finally {
    await http.close().catch(() => {});
  }
}

/**
 * The buffer for a body announced as `bytes` long, or undefined where none
 * can be had (longer than a Buffer can be, or refused by the allocator):
 * then the chunks are kept as they come. Its pages are untouched until bytes
 * arrive, so an announced length costs memory only as the body is received;
 * a length that no body follows costs address space, not memory.
 */
function bufferFor(bytes: number): Buffer | undefined {
  if (!Number.isSafeInteger(bytes) || bytes > MAX_LENGTH) return undefined;
  try {
    return Buffer.allocUnsafe(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The whole body. With a Content-Length, chunks are copied into one buffer
 * of that size as they arrive, rather than kept and concatenated at the end:
 * a large body then never takes twice its size. Given a spool, a body that
 * grows past LARGE_BODY_BYTES goes on into a file of it, written as it
 * arrives (the next chunk is read only once the last is written), so that
 * memory holds at most that much of it; a body over `maxBytes` (or announced
 * so) is a BodyTooLargeError. Exported for its tests.
 */
export async function readBody(
  body: AsyncIterable<unknown>,
  contentLength: string | string[] | undefined,
  limits: {
    readonly maxBytes: number;
    readonly spool?: Spool | undefined;
    readonly memoryBytes?: number;
    /** The route, for the spool's messages. */
    readonly label?: string;
  },
): Promise<Body> {
  const announced =
    typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  if (announced !== undefined && announced > limits.maxBytes) throw new BodyTooLargeError(limits.maxBytes);
  const memoryBytes = limits.spool ? (limits.memoryBytes ?? LARGE_BODY_BYTES) : limits.maxBytes;
  const out = announced !== undefined && announced <= memoryBytes ? bufferFor(announced) : undefined;
  const chunks = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  // Past `out` (more than announced: undici would normally refuse it), or without it, the chunks as they come.
  const kept: Buffer[] = [];
  let used = 0;
  let size = 0;
  for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
    const c = next.value;
    size += c.length;
    if (size > limits.maxBytes) throw new BodyTooLargeError(limits.maxBytes);
    if (out !== undefined && kept.length === 0 && used + c.length <= out.length) {
      used += c.copy(out, used);
      continue;
    }
    if (out !== undefined && kept.length === 0) kept.push(out.subarray(0, used));
    kept.push(c);
    if (limits.spool && size > memoryBytes)
      return limits.spool.write(limits.label ?? 'the request', rest(kept, chunks, size, limits.maxBytes));
  }
  if (kept.length === 0) return out !== undefined ? out.subarray(0, used) : Buffer.alloc(0);
  return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
}

/** The chunks kept (each let go once handed over), then the rest of the body, up to `maxBytes` in all. */
async function* rest(
  kept: Buffer[],
  chunks: AsyncIterator<Buffer>,
  size: number,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  for (let c = kept.shift(); c !== undefined; c = kept.shift()) yield c;
  for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
    size += next.value.length;
    if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
    yield next.value;
  }
}

/** At most the first `max` bytes of a body, the rest left unread (its connection closed). */
export async function readStart(body: AsyncIterable<unknown>, max: number): Promise<Buffer> {
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    kept.push(chunk.subarray(0, max - size));
    size += kept[kept.length - 1]!.length;
    if (size >= max) break;
  }
  return Buffer.concat(kept);
}

/** The message of a route whose body passed its limit (written to disk as it came, or held in memory): nothing of the body quoted. */
function tooLarge(label: string, limit: number, spooled: boolean): string {
  const start = `the answer of ${label} was larger than ${sizeShown(limit)}, the most this tool`;
  if (spooled) {
    return (
      `${start} reads of one response (docs/decisions.md); nothing of it was kept. A body that large is a server ` +
      `fault (or a hostile server): check the server and the base URL`
    );
  }
  return (
    `${start} holds in memory of one response (docs/decisions.md); nothing of it was kept. A snapshot or collect ` +
    `writes a body that large to disk as it arrives, and reads up to ${sizeShown(MAX_BODY_BYTES)} of it; ` +
    `otherwise check the server and the base URL`
  );
}

/** A Content-Encoding other than identity, as a short escaped text; undefined for none. */
function unaskedEncoding(value: string | string[] | undefined): string | undefined {
  const v = (Array.isArray(value) ? value.join(', ') : (value ?? '')).trim();
  if (v === '' || v.toLowerCase() === 'identity') return undefined;
  return escapeControl(v.slice(0, 40));
}
