import { getResponse, type RequestHandler } from 'msw';
import { Dispatcher, errors } from 'undici';
import { TRUNCATE_HEADER } from '../fake/backend.js';

/**
 * An undici dispatcher that answers every request from msw handlers in this
 * process, through msw's `getResponse`: the call the loopback HTTPS fake
 * (test/fake/server.ts) makes for each request it receives.
 *
 * Why not msw's `setupServer`: it intercepts `globalThis.fetch` and
 * `node:http`'s ClientRequest, but the HttpClient calls undici's
 * `Agent#request`, whose sockets msw never sees. Why not undici's `MockAgent`:
 * its reply callback must give the status and headers synchronously, and msw
 * handlers answer asynchronously (latency, faults). So the commands take a
 * dispatcher (`CommandDeps.dispatcher`), and the tests hand them this one.
 * undici's own `Dispatcher#request` drives it, so the response object, header
 * parsing, abort signals and body stream are undici's.
 */
export class MswDispatcher extends Dispatcher {
  /** Requests answered, in order: how a test knows the handlers were really called. */
  readonly seen: string[] = [];

  constructor(private readonly handlers: readonly RequestHandler[]) {
    super();
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (!handler.onConnect || !handler.onHeaders || !handler.onData || !handler.onComplete || !handler.onError) {
      throw new Error(
        'MswDispatcher drives the handlers of Dispatcher#request (onConnect … onComplete); another API was used',
      );
    }
    let aborted = false;
    const fail = (err: Error) => {
      if (aborted) return;
      aborted = true;
      handler.onError!(err);
    };
    handler.onConnect((err) => fail(err ?? new errors.RequestAbortedError()));
    this.answer(opts, handler, () => aborted).catch(fail);
    return true;
  }

  private async answer(
    opts: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
    aborted: () => boolean,
  ): Promise<void> {
    const origin = typeof opts.origin === 'string' ? opts.origin : (opts.origin?.toString() ?? '');
    const url = `${origin.replace(/\/$/, '')}${opts.path}`;
    this.seen.push(`${opts.method} ${opts.path}`);
    const headers = new Headers();
    for (const [name, value] of Object.entries((opts.headers ?? {}) as Record<string, string | string[] | undefined>)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const body = typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : undefined;
    const request = new Request(url, {
      method: opts.method,
      headers,
      ...(body !== undefined && body.length > 0 ? { body } : {}),
    });
    const response =
      (await getResponse([...this.handlers], request)) ??
      new Response(JSON.stringify({ error: 'not found' }), {
        status: 404,
        headers: { 'content-type': 'application/json' },
      });
    const bytes = Buffer.from(await response.arrayBuffer());
    if (aborted()) return;

    const raw: string[] = [];
    response.headers.forEach((value, name) => {
      if (name !== TRUNCATE_HEADER && name !== 'set-cookie' && name !== 'content-length') raw.push(name, value);
    });
    for (const cookie of response.headers.getSetCookie()) raw.push('set-cookie', cookie);
    raw.push('content-length', String(bytes.length));
    handler.onHeaders!(response.status, raw as unknown as Buffer[], () => {}, response.statusText);
    if (response.headers.get(TRUNCATE_HEADER) === '1') {
      // As over the real server: the whole length announced, half sent, then the connection is gone.
      handler.onData!(bytes.subarray(0, Math.floor(bytes.length / 2)));
      if (!aborted()) handler.onError!(new errors.SocketError('other side closed'));
      return;
    }
    if (opts.method !== 'HEAD' && bytes.length > 0) handler.onData!(bytes);
    if (!aborted()) handler.onComplete!([]);
  }

  // Nothing to release: no socket was ever opened. Both forms undici's types declare.
  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    if (callback) return void queueMicrotask(callback);
    return Promise.resolve();
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const callback = typeof a === 'function' ? a : b;
    if (callback) return void queueMicrotask(callback);
    return Promise.resolve();
  }
}
