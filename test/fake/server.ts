import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { getResponse, type RequestHandler } from 'msw';
import { TRUNCATE_HEADER } from './backend.js';
import { getTestCerts } from './certs.js';

/**
 * A real loopback server answering with msw handlers (STYLE point 11), so the
 * client's undici transport, TLS verification, cookies, keep-alive and
 * timeouts are exercised for real.
 */

export interface FakeServerOptions {
  tls: boolean;
  /** Server key and certificate; default getTestCerts(). */
  certs?: { keyPem: string; certPem: string };
}

export interface FakeServer {
  /** `https://127.0.0.1:PORT` (or `http://`). */
  url: string;
  port: number;
  /** Stops listening and destroys every connection, idle keep-alive ones included. */
  close(): Promise<void>;
}

function toRequest(req: http.IncomingMessage, origin: string, body: Buffer | undefined): Request {
  const headers = new Headers();
  // Node has already joined repeated headers (cookies with '; ').
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return new Request(`${origin}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body && body.length ? { body } : {}),
  });
}

async function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function outgoingHeaders(response: Response): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    if (name !== TRUNCATE_HEADER && name !== 'set-cookie') out[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  return out;
}

async function answer(
  handlers: readonly RequestHandler[],
  origin: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const request = toRequest(req, origin, await readBody(req));
  const response =
    (await getResponse([...handlers], request)) ??
    new Response(JSON.stringify({ error: 'not found' }), {
      status: 404,
      headers: { 'content-type': 'application/json' },
    });
  const headers = outgoingHeaders(response);

  if (response.headers.get(TRUNCATE_HEADER) === '1') {
    // Announce the whole body, send half, and cut the connection: what a
    // dropped proxy connection looks like to the client.
    const full = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(full.length);
    res.writeHead(response.status, headers);
    res.write(full.subarray(0, Math.floor(full.length / 2)), () => (res.socket ?? req.socket).destroy());
    return;
  }

  res.writeHead(response.status, headers);
  if (!response.body || req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>), res);
}

/**
 * Starts a server on 127.0.0.1 with an ephemeral port. `handlers` is read on
 * every request, so a caller may fill the array after start (the backend needs
 * the server's URL before its handlers exist).
 */
export async function startFakeServer(
  handlers: readonly RequestHandler[],
  opts: FakeServerOptions,
): Promise<FakeServer> {
  let origin = '';
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    answer(handlers, origin, req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `fake server: ${err instanceof Error ? err.message : String(err)}` }));
      } else {
        res.destroy();
      }
    });
  };
  const certs = opts.tls ? (opts.certs ?? getTestCerts()) : undefined;
  const server: http.Server | https.Server = certs
    ? https.createServer({ key: certs.keyPem, cert: certs.certPem, keepAlive: true }, onRequest)
    : http.createServer({ keepAlive: true }, onRequest);

  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `${certs ? 'https' : 'http'}://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: origin,
    port,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
        // Also sockets the HTTP layer does not track yet (mid TLS handshake).
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
