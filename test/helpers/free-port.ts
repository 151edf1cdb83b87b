import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on now (for a server a test starts: PostgreSQL, the node exporter). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
