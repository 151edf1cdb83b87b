import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Test TLS material, generated with the openssl CLI into a temporary
 * directory once per process and removed when the process exits. Nothing is
 * committed. Private keys are kept in memory only; their files are deleted
 * right after generation.
 */

export interface TestCerts {
  /** PEM of the CA that signed the server certificate. */
  caPem: string;
  /** Path of that CA PEM (for --ca-file / NODE_EXTRA_CA_CERTS). */
  caFile: string;
  /** Server private key (PEM). */
  keyPem: string;
  /** Server certificate (PEM), SAN IP:127.0.0.1, DNS:localhost. */
  certPem: string;
}

let baseDir: string | undefined;
const cache = new Map<string, TestCerts>();

/**
 * Removes `dir` when the process ends, including by signal: vitest ends its
 * worker processes with SIGTERM, which skips 'exit' listeners.
 */
function removeAtEnd(dir: string): void {
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => {
      cleanup();
      // When nobody else handles the signal, end the process as it would have
      // without this listener; otherwise leave it to them (serve.ts stops gracefully).
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

function certDir(): string {
  if (!baseDir) {
    // Under vitest, in a directory the run's global setup removes at the end
    // (test/global/tmp-root.ts): a worker's exit handler may run only after
    // the run has looked for leftovers.
    baseDir = mkdtempSync(join(process.env.SVC_SNAPSHOT_TEST_CERTS ?? tmpdir(), 'svc-snapshot-certs-'));
    removeAtEnd(baseDir);
  }
  return baseDir;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = '36500';

function generate(name: string, san = 'IP:127.0.0.1,DNS:localhost'): TestCerts {
  const dir = join(certDir(), name);
  mkdirSync(dir, { mode: 0o700 });
  openssl(
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      DAYS,
      '-sha256',
      '-subj',
      `/O=svc-snapshot tests/CN=svc-snapshot ${name} test CA`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  openssl(['req', '-new', ...EC_KEY, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    [
      `subjectAltName=${san}`,
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectKeyIdentifier=hash',
      'authorityKeyIdentifier=keyid',
      '',
    ].join('\n'),
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-set_serial',
      '0x1001',
      '-out',
      'server.pem',
      '-days',
      DAYS,
      '-sha256',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  const certs: TestCerts = {
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    caFile: join(dir, 'ca.pem'),
    keyPem: readFileSync(join(dir, 'server.key'), 'utf8'),
    certPem: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
  for (const f of ['ca.key', 'server.key', 'server.csr', 'server.ext']) rmSync(join(dir, f), { force: true });
  return certs;
}

function cached(name: string, san?: string): TestCerts {
  let certs = cache.get(name);
  if (!certs) cache.set(name, (certs = generate(name, san)));
  return certs;
}

/** A CA of its own and a server certificate for the name localhost only (no IP address): wrong for 127.0.0.1. */
export function getLocalhostNameCerts(): TestCerts {
  return cached('localhost-name', 'DNS:localhost');
}

/** The test CA and a server certificate it signed. */
export function getTestCerts(): TestCerts {
  return cached('trusted');
}

/** Another CA (and server certificate): a client trusting only getTestCerts() must reject it. */
export function getUntrustedCerts(): TestCerts {
  return cached('untrusted');
}
