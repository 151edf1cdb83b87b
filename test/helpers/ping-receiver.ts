import { http, HttpResponse, type RequestHandler } from 'msw';
import { getTestCerts, type TestCerts } from '../fake/certs.js';
import { startFakeServer } from '../fake/server.js';

export interface ReceivedPing {
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Whatever the test's `probe` returned when the ping arrived (e.g. how many API requests had been made). */
  probe: unknown;
}

export interface PingReceiver {
  /** `https://127.0.0.1:PORT` */
  url: string;
  received: ReceivedPing[];
  /** Status to answer with; 200 unless set. */
  status: number;
  /** Wait this long before answering (a receiver that hangs); 0 unless set. */
  delayMs: number;
  close(): Promise<void>;
}

/** A healthchecks-style receiver over real HTTPS on 127.0.0.1 that records every request. */
export async function startPingReceiver(
  probe: () => unknown = () => undefined,
  certs: TestCerts = getTestCerts(),
): Promise<PingReceiver> {
  const handlers: RequestHandler[] = [];
  const server = await startFakeServer(handlers, { tls: true, certs });
  const receiver: PingReceiver = {
    url: server.url,
    received: [],
    status: 200,
    delayMs: 0,
    close: () => server.close(),
  };
  handlers.push(
    http.all('*', async ({ request }) => {
      const url = new URL(request.url);
      receiver.received.push({
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers.entries()),
        body: await request.text(),
        probe: probe(),
      });
      if (receiver.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.delayMs).unref());
      return new HttpResponse('OK', { status: receiver.status });
    }),
  );
  return receiver;
}
