import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { withoutUserinfo } from './url.js';

/** The proxy variables undici's EnvHttpProxyAgent reads, in the order it prefers them for https (lower case first, as undici). */
const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY'] as const;

/** The proxy that requests of `protocol` go through, and the variable it came from; undefined when none is set. */
export function httpsProxy(
  env: NodeJS.ProcessEnv,
  protocol: string = 'https:',
): { variable: string; url: string } | undefined {
  for (const variable of protocol === 'http:' ? PROXY_VARIABLES.slice(2) : PROXY_VARIABLES) {
    const url = env[variable];
    if (url) return { variable, url };
  }
  return undefined;
}

/**
 * A proxy URL must parse and must not carry credentials: undici would send
 * them to the proxy, and any message about the proxy would risk repeating
 * them. Checked before any request (README.md, "Options").
 */
export function checkProxyEnvironment(env: NodeJS.ProcessEnv): void {
  for (const variable of PROXY_VARIABLES) {
    const raw = env[variable];
    if (!raw) continue;
    const shown = escapeControl(withoutUserinfo(raw));
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(
        `${variable} "${shown}" is not a URL; give one like http://proxy.example.org:3128, or unset it`,
      );
    }
    if (url.username || url.password) {
      throw new UsageError(
        `${variable} must not contain a user name or password (a proxy that needs them is not supported); unset it ` +
          `or give the proxy without credentials`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`${variable} "${shown}" must start with http:// or https://`);
    }
  }
}
