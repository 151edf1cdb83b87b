import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../errors.js';

export function parsePositiveNumber(flag: string, raw: string, max: number): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0 || n > max) {
    throw new UsageError(`${flag} must be a number greater than 0 and at most ${max} (got "${raw}")`);
  }
  return n;
}

export function parseInteger(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return n;
}

/** `--realms a,b`: the ids, once each, in order. */
export function parseRealms(raw: string): string[] {
  const ids = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (ids.length === 0) throw new UsageError('--realms needs at least one realm id, e.g. --realms libvirt,altvirt');
  return [...new Set(ids)];
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A CA bundle is a few hundred kilobytes; anything past this is not one. */
const MAX_PEM_BYTES = 16 * 1024 * 1024;

/**
 * The text of a regular file of bounded size: `/dev/zero`, a FIFO or a
 * multi-gigabyte file given by mistake must give a message, not exhaust
 * memory or hang. (Symlinks are followed: system CA paths are often links.)
 */
function readRegularText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
    if (st.size > MAX_PEM_BYTES) throw Object.assign(new Error('too large'), { code: `larger than ${MAX_PEM_BYTES / 1024 / 1024} MiB` });
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function readPem(path: string, what: string): string[] {
  let text: string;
  try {
    text = readRegularText(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${what} ${path} cannot be read (${code}); give the path of a PEM file holding your CA certificate(s)`);
  }
  const certs = text.match(PEM_CERT) ?? [];
  if (certs.length === 0) {
    throw new UsageError(`${what} ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); convert a DER file with: openssl x509 -inform der -in ca.der -out ca.pem`);
  }
  return certs;
}

/**
 * The trust store when `--ca-file` is given: Node's bundled roots, the
 * certificates of NODE_EXTRA_CA_CERTS (which Node applies only when no `ca` is
 * set, so they are added here explicitly) and the file's. Undefined otherwise,
 * which leaves Node's default store (NODE_EXTRA_CA_CERTS included) in force.
 */
export function trustStore(caFile: string | undefined, env: NodeJS.ProcessEnv): string[] | undefined {
  if (caFile === undefined) return undefined;
  const extra = env.NODE_EXTRA_CA_CERTS ? safeReadPem(env.NODE_EXTRA_CA_CERTS) : [];
  return [...rootCertificates, ...extra, ...readPem(caFile, '--ca-file')];
}

function safeReadPem(path: string): string[] {
  try {
    return readRegularText(path).match(PEM_CERT) ?? [];
  } catch {
    return []; // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS.
  }
}
