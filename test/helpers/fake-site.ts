import type { RequestHandler } from 'msw';
import { createFakeBackend, type FakeBackend, type FakeBackendOptions } from '../fake/backend.js';
import { getTestCerts, type TestCerts } from '../fake/certs.js';
import { startFakeServer } from '../fake/server.js';

export interface FakeSiteOptions extends Omit<FakeBackendOptions, 'baseUrl'> {
  /** Server certificate; default getTestCerts() (pass getUntrustedCerts() to test TLS failures). */
  certs?: TestCerts;
}

export interface FakeSite {
  /** `https://127.0.0.1:PORT`: the base URL to give the CLI. */
  url: string;
  /** CA file that verifies the server (the `certs` CA). */
  caFile: string;
  backend: FakeBackend;
  close(): Promise<void>;
}

/** The fake backend over real HTTPS on 127.0.0.1, signed by the test CA. No vitest dependency (the bench uses it). */
export async function startFakeSite(opts: FakeSiteOptions = {}): Promise<FakeSite> {
  const { certs = getTestCerts(), ...backendOpts } = opts;
  // The backend's handlers need the server's URL, so the server starts with an
  // empty list that is filled once the port is known.
  const handlers: RequestHandler[] = [];
  const server = await startFakeServer(handlers, { tls: true, certs });
  try {
    const backend = createFakeBackend({ ...backendOpts, baseUrl: server.url });
    handlers.push(...backend.handlers);
    return { url: server.url, caFile: certs.caFile, backend, close: () => server.close() };
  } catch (err) {
    await server.close();
    throw err;
  }
}
