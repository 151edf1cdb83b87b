import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Deadline, notifyDispatcher, postAll, type Post } from '../../src/notify/send.js';

// A receiver that answers 200, or 400 to the paths in `refused`; each POST it reads is noted in `log`.
let server: Server;
let base = '';
const log: string[] = [];
let refused: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      log.push(`received ${req.url}`);
      res.statusCode = refused.includes(req.url ?? '') ? 400 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function* posts(n: number): Generator<Post> {
  for (let i = 1; i <= n; i++) {
    log.push(`made /${i}`);
    yield { url: `${base}/${i}`, body: '[]' };
  }
}

describe('postAll', () => {
  it('makes the next body while the one before is on its way, and sends them in order', async () => {
    log.length = 0;
    refused = [];
    const dispatcher = notifyDispatcher(undefined, 5000);
    expect(await postAll(dispatcher, posts(3), new Deadline(5000))).toBeUndefined();
    await dispatcher.close();
    expect(log).toEqual(['made /1', 'made /2', 'received /1', 'made /3', 'received /2', 'received /3']);
  });

  it('sends nothing after a POST that is refused', async () => {
    log.length = 0;
    refused = ['/2'];
    const dispatcher = notifyDispatcher(undefined, 5000);
    // Retried within its deadline, then given up.
    expect(await postAll(dispatcher, posts(4), new Deadline(1200))).toBe(
      'answered HTTP 400: the receiver refused the message; check the target URL',
    );
    await dispatcher.close();
    expect(new Set(log.filter((l) => l.startsWith('received')))).toEqual(new Set(['received /1', 'received /2']));
  });

  it('says to check the notification target, not the base URL, when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dispatcher = notifyDispatcher(undefined, 1000);
    const why = await postAll(dispatcher, [{ url: `http://127.0.0.1:${port}/in/x`, body: '{}' }], new Deadline(300));
    await dispatcher.close();
    expect(why).toBe(
      `connection refused by 127.0.0.1:${port}; check the notification target's host and port, and that the service is up`,
    );
  });
});
