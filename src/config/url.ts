import { isIP } from 'node:net';
import { UsageError } from '../cli/errors.js';

/** Loopback per CONTRACT section 2: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Validates and normalises a service URL: https required (http only to a
 * loopback host), no credentials, query or fragment; trailing `/` and, when
 * `stripApi`, a trailing `/api` removed. Returns e.g. `https://host:8443/prefix`.
 */
export function normaliseServiceUrl(raw: string, what: string, stripApi: boolean): string {
  const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`${what} "${shown}" is not a URL; give one like https://platform.example.org`);
  }
  if (url.username || url.password) {
    throw new UsageError(`${what} must not contain a user name or password; tokens are passed with the token options`);
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) {
      throw new UsageError(
        `${what} uses http:// to ${url.hostname}, which would send the token unencrypted; use https:// (http:// is accepted only for 127.0.0.1, ::1 and localhost)`,
      );
    }
  } else if (url.protocol !== 'https:') {
    throw new UsageError(`${what} must start with https:// (got ${url.protocol}//)`);
  }
  if (url.search || url.hash) {
    throw new UsageError(`${what} must not have a query string or fragment; give only the scheme, host and optional path prefix`);
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (stripApi) path = path.replace(/\/api$/, '');
  return `${url.protocol}//${url.host}${path}`;
}
