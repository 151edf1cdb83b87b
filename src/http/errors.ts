import { escapeControl } from '../util/escape.js';
import { redact } from '../util/redact.js';

/** `size`: the body passed the most this tool reads of one response (MAX_BODY_BYTES; MAX_MEMORY_BODY_BYTES held in memory). */
export type HttpErrorKind = 'status' | 'timeout' | 'network' | 'tls' | 'aborted' | 'size';

/**
 * A failed request, octokit-style: numeric status (0 when no response came),
 * the route label (`GET /api/users`, never a token) and the cause. The message
 * is redacted when built, so it can be printed as is.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly route: string;
  readonly kind: HttpErrorKind;
  readonly attempts: number;
  /** The message without the route, for places that show the route already. */
  readonly detail: string;

  constructor(init: {
    route: string;
    status: number;
    kind: HttpErrorKind;
    detail: string;
    attempts: number;
    cause?: unknown;
  }) {
    super(redact(`${init.route}: ${init.detail}`), { cause: init.cause });
    this.name = 'HttpError';
    this.status = init.status;
    this.route = init.route;
    this.kind = init.kind;
    this.attempts = init.attempts;
    this.detail = redact(init.detail);
  }
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost error carrying `code` (a Node system error has `port` and `address`). */
function errnoError(err: unknown): { code?: string; port?: number } | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    if (typeof (e as { port?: unknown }).port === 'number') return e as { code?: string; port?: number };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The proxy a request went through: its URL without credentials, and the variable that set it. */
export interface ProxyInUse {
  readonly shown: string;
  readonly variable: string;
  readonly port: number;
}

/**
 * Classifies a transport error and says in words what happened and what to
 * do; `configured` names where the user gave the host (the site's base URL,
 * a notification target).
 */
export function describeTransportError(
  err: unknown,
  host: string,
  proxy?: ProxyInUse,
  configured = 'the base URL',
): { kind: HttpErrorKind; detail: string } {
  const code = errorCode(err);
  const message = escapeControl(err instanceof Error ? err.message : String(err));
  if (proxy) {
    // Through a proxy the only socket this process opens is the one to the proxy.
    const sys = errnoError(err);
    const toProxy = sys?.port === proxy.port;
    if (
      toProxy &&
      (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH')
    ) {
      return {
        kind: 'network',
        detail:
          `the proxy ${proxy.shown} (from ${proxy.variable}) could not be reached (${code}); check that ` +
          `variable and that the proxy is up, or unset it to connect directly`,
      };
    }
    const tunnel = /Proxy response \((\d+)\) !== 200/.exec(message);
    if (tunnel) {
      return {
        kind: 'network',
        detail:
          `the proxy ${proxy.shown} (from ${proxy.variable}) refused to open a tunnel to ${host} (HTTP ` +
          `${tunnel[1]}); check the proxy's rules for that host, or list the host in NO_PROXY`,
      };
    }
  }
  if (code && (TLS_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'))) {
    const hint =
      code === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? `the certificate of ${host} does not name that host; use the host name the certificate was issued for`
        : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
          ? `the certificate of ${host} is outside its validity period; renew it on the server`
          : `the certificate of ${host} is not trusted; if your site uses an internal CA, pass its PEM certificate ` +
            `with --ca-file (TLS verification cannot be turned off)`;
    return { kind: 'tls', detail: `TLS verification failed (${code}): ${hint}` };
  }
  switch (code) {
    case 'ECONNREFUSED':
      return {
        kind: 'network',
        detail: `connection refused by ${host}; check ${configured} and port, and that the service is up`,
      };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { kind: 'network', detail: `host ${host} could not be resolved (${code}); check ${configured} and DNS` };
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_CLOSED':
      return {
        kind: 'network',
        detail: `the connection to ${host} was closed before the response was complete (${code})`,
      };
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { kind: 'timeout', detail: `connecting to ${host} timed out` };
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return { kind: 'network', detail: 'the response body was truncated (fewer bytes than its Content-Length)' };
    default:
      return { kind: 'network', detail: `request failed: ${code ? `${code} ` : ''}${message}` };
  }
}
