import { TOOL } from '../version.js';
import { runChildSync } from '../util/child-sync.js';
import { createDispatcher } from '../http/client.js';

export type PingEvent = 'start' | 'success' | 'fail';

/** "A few seconds": a heartbeat receiver that hangs must not hold up a nightly run (--timeout, when shorter, bounds it too). */
export const PING_TIMEOUT_MS = 5000;

export interface PingTarget {
  /** Normalised: https (or http to loopback), no credentials, query or trailing `/`. */
  readonly url: string;
  /** The run's trust store (--ca-file), or undefined for Node's default with NODE_EXTRA_CA_CERTS. */
  readonly ca: readonly string[] | undefined;
  /** For the connection, the answer and the body together. */
  readonly timeoutMs: number;
}

export function pingUrl(base: string, event: PingEvent): string {
  return event === 'success' ? base : `${base}/${event}`;
}

/**
 * Where a warning may name the receiver: its host only, since the path of a
 * healthchecks URL is the check's secret key.
 */
function pingHost(base: string): string {
  return new URL(base).host;
}

/**
 * One GET to the heartbeat receiver, carrying nothing but the user agent: no
 * cookie, no token, nothing from the site. Redirects are not followed.
 * Resolves to undefined on a 2xx answer, or to a warning; never rejects.
 */
export async function sendPing(target: PingTarget, event: PingEvent): Promise<string | undefined> {
  const { timeoutMs } = target;
  // One connection, with the run's trust and proxy settings and TLS verified, as the API's requests.
  const dispatcher = createDispatcher({ concurrency: 1, ca: target.ca, timeoutMs });
  const host = pingHost(target.url);
  try {
    const url = new URL(pingUrl(target.url, event));
    const res = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { 'user-agent': `${TOOL.name}/${TOOL.version}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
    if (res.statusCode < 200 || res.statusCode > 299)
      return `ping "${event}" to ${host} was answered with status ${res.statusCode}`;
    return undefined;
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const code = e.cause?.code ?? e.code ?? e.name;
    return `ping "${event}" to ${host} failed (${code}); the run itself is not affected`;
  } finally {
    await dispatcher.close().catch(() => {});
  }
}

/**
 * The failure ping from a signal handler, which must end the process without
 * returning to the event loop (the run would go on): a short-lived child
 * process sends it while this one waits, bounded by the ping timeout.
 */
export function sendPingSync(target: PingTarget, event: PingEvent): string | undefined {
  const input = { url: target.url, ca: target.ca ?? null, timeoutMs: target.timeoutMs, event };
  const res = runChildSync(new URL('./ping-child.js', import.meta.url), input, target.timeoutMs + 1000);
  if (res.error || res.status === null) return `ping "${event}" to ${pingHost(target.url)} did not finish in time`;
  const warning = res.stdout.trim();
  return warning === '' ? undefined : warning;
}
