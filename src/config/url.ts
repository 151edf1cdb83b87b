import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';

/**
 * `raw` with anything that may be `user:password@` removed, for messages:
 * from after the scheme (`https://`, or a mistyped `https:/`; the start when
 * there is none) to the last `@` of the text. Worked out on the text rather
 * than with URL, so it holds for a text that does not parse, and errs on
 * removing too much (a password may hold `/`, `//` or `?`).
 */
export function withoutUserinfo(raw: string): string {
  const start = /^[A-Za-z][A-Za-z0-9+.-]*:\/{1,2}/.exec(raw)?.[0].length ?? 0;
  const at = raw.lastIndexOf('@');
  return at >= start ? `${raw.slice(0, start)}${raw.slice(at + 1)}` : raw;
}

/** Loopback, where http:// is allowed: 127.0.0.0/8, ::1, localhost. */
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
  const bare = escapeControl(withoutUserinfo(raw));
  const shown = bare.length > 200 ? `${bare.slice(0, 200)}…` : bare;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    if (withoutUserinfo(raw) !== raw)
      throw new UsageError(
        `${what} "${shown}" is not a URL, and it must not contain a user name or password (that part is not shown); ` +
          `give one like https://platform.example.org`,
      );
    throw new UsageError(`${what} "${shown}" is not a URL; give one like https://platform.example.org`);
  }
  if (url.username || url.password) {
    throw new UsageError(`${what} must not contain a user name or password; tokens are passed with the token options`);
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) {
      throw new UsageError(
        `${what} uses http:// to ${url.hostname}, which would send the token unencrypted; use https:// (http:// is ` +
          `accepted only for 127.0.0.1, ::1 and localhost)`,
      );
    }
  } else if (url.protocol !== 'https:') {
    throw new UsageError(`${what} must start with https:// (got ${url.protocol}//)`);
  }
  if (url.search || url.hash) {
    throw new UsageError(
      `${what} must not have a query string or fragment; give only the scheme, host and optional path prefix`,
    );
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (stripApi) path = path.replace(/\/api$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * A base URL as the tool writes it in manifests: no trailing `/` or `/api`.
 * How a site is named wherever snapshots of several sites meet: the history
 * database's runs, and the previous snapshot found beside a new one.
 */
export function normaliseSite(raw: string): string {
  return raw
    .trim()
    .replace(/\/+$/, '')
    .replace(/\/api$/, '')
    .replace(/\/+$/, '');
}

/** Whether two manifests' base URLs name one site (as normaliseSite keys it), wherever the tool compares sites. */
export function sameSite(a: string, b: string): boolean {
  return normaliseSite(a) === normaliseSite(b);
}
