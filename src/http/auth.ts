/**
 * How a request carries a token, and what a refused token means. The
 * management API reads the token from the `SVC_TOKEN` cookie (collect and
 * check both send it); the audit service from `x-access-token`.
 */
import { TokenRejectedError } from '../errors.js';

/** The headers that authenticate a management API request with `token`. */
export function managementAuth(token: string): Record<string, string> {
  return { cookie: `SVC_TOKEN=${token}` };
}

/** The headers that authenticate an audit service request with `token`. */
export function auditAuth(token: string): Record<string, string> {
  return { 'x-access-token': token };
}

export interface Refusal {
  readonly route: string;
  readonly status: 401 | 403;
  /** Which token, e.g. "User token" or "audit token". */
  readonly token: string;
  /** Where it came from: a flag or an environment variable, never its value. */
  readonly source: string;
  /** Why a 401 and a 403 refuse it, each a clause after "it is"/"it". */
  readonly why: { readonly 401: string; readonly 403: string };
  /** What to do, a sentence; empty when `why` says it. */
  readonly advice?: string;
}

/** The error a refused token stops a run with (exit 3), naming the token by its source. */
export function tokenRefused(r: Refusal): TokenRejectedError {
  const advice = r.advice ? ` ${r.advice}` : '';
  return new TokenRejectedError(
    `${r.status} on ${r.route}: the ${r.token} (from ${r.source}) was refused: ${r.why[r.status]}.${advice} Nothing ` +
      `was published.`,
  );
}
