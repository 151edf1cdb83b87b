import { subscribe, unsubscribe } from 'node:diagnostics_channel';

interface Connected {
  connectParams?: { hostname?: string; host?: string; protocol?: string };
  socket?: { authorized?: boolean; encrypted?: boolean };
}

/**
 * Watches the connections undici makes to `hostname` (directly or through a
 * proxy tunnel) and remembers whether a TLS socket to it was authorized:
 * its certificate chain and host name verified. `check` reports TLS as
 * verified from this, never from the mere absence of an error.
 */
export function observeTls(hostname: string): { authorized(): boolean | undefined; stop(): void } {
  const want = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  let seen: boolean | undefined;
  const onConnected = (message: unknown) => {
    const m = message as Connected;
    const host = (m.connectParams?.hostname ?? '').replace(/^\[|\]$/g, '').toLowerCase();
    if (host !== want || m.connectParams?.protocol !== 'https:' || !m.socket?.encrypted) return;
    // One unauthorized socket is enough to say no.
    seen = seen === false ? false : m.socket.authorized === true;
  };
  subscribe('undici:client:connected', onConnected);
  return {
    authorized: () => seen,
    stop: () => unsubscribe('undici:client:connected', onConnected),
  };
}

/**
 * The TLS verdict of a check: an earlier failure stands; otherwise an https
 * URL is verified only when an authorized socket to its host was seen.
 */
export function tlsVerdict(
  url: string,
  seen: boolean | undefined,
  current: { ok: boolean; error?: string },
  reachable: boolean,
): { ok: boolean; error?: string } {
  if (!current.ok || !reachable || !url.startsWith('https:')) return current;
  if (seen === true) return current;
  return {
    ok: false,
    error:
      seen === false
        ? 'a connection was made without a verified certificate chain and host name'
        : 'no verified TLS connection was made',
  };
}

/**
 * How a check's --json reports TLS, as its text does: `used: false` (and no
 * verdict, `ok: null`) for http:// to a loopback host, where no TLS is
 * spoken; `ok: null` too for an https host that was not reached, where
 * nothing was verified; otherwise whether the connection was verified.
 */
export function tlsForJson(
  url: string,
  tls: { ok: boolean; error?: string },
  reachable: boolean,
): { used: boolean; ok: boolean | null; error?: string } {
  if (tls.ok && !url.startsWith('https:')) return { used: false, ok: null };
  if (tls.ok && !reachable) return { used: true, ok: null };
  return { used: true, ...tls };
}

/** How a check prints TLS. */
export function describeTls(url: string, tls: { ok: boolean; error?: string }, reachable: boolean): string {
  if (!tls.ok) return `FAILED: ${tls.error ?? ''}`;
  if (!url.startsWith('https:')) return 'not used (http:// to a loopback host)';
  return reachable ? 'verified (certificate chain and host name)' : 'not checked (the host was not reached)';
}
