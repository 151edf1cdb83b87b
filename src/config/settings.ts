import type { TokenPlan, TokenFlags } from './tokens.js';
import { resolveTokens } from './tokens.js';
import { normaliseServiceUrl } from './url.js';
import { checkProxyEnvironment } from './proxy.js';
import { trustStore } from './values.js';
import { valueOf } from './options.js';
import { UsageError } from '../errors.js';

/** What every command that talks to the management API needs. */
export interface ConnectionSettings {
  /** Normalised, without trailing `/` or `/api`. */
  readonly baseUrl: string;
  readonly tokens: TokenPlan;
  /** Realms to read when GET /api/realms is not served. */
  readonly realms: readonly string[];
  /** --realms was given (it only matters where GET /api/realms is not served). */
  readonly realmsGiven: boolean;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly retries: number;
  /** Full trust store when --ca-file is given; undefined keeps Node's default. */
  readonly ca: readonly string[] | undefined;
}

export interface OutputSettings {
  readonly quiet: boolean;
  readonly json: boolean;
}

export interface ConnectionFlags extends TokenFlags {
  baseUrl?: string;
  realms?: string;
  timeout?: string;
  concurrency?: string;
  retries?: string;
  caFile?: string;
}


export function resolveBaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = flag ?? (env.SVC_BASE_URL === '' ? undefined : env.SVC_BASE_URL);
  if (raw === undefined) {
    throw new UsageError('no base URL given: pass --base-url https://platform.example.org or set SVC_BASE_URL');
  }
  return normaliseServiceUrl(raw, flag !== undefined ? '--base-url' : 'SVC_BASE_URL', true);
}

/** Transport options shared by the management and audit clients. */
export function resolveTransport(flags: ConnectionFlags, env: NodeJS.ProcessEnv) {
  checkProxyEnvironment(env);
  return {
    timeoutMs: valueOf('timeout', flags) * 1000,
    concurrency: valueOf('concurrency', flags),
    retries: valueOf('retries', flags),
    ca: trustStore(flags.caFile, env),
  };
}

/** Flags beat the environment, except tokens (see resolveTokens). */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): ConnectionSettings {
  const transport = resolveTransport(flags, env);
  return {
    baseUrl: resolveBaseUrl(flags.baseUrl, env),
    realms: valueOf('realms', flags),
    realmsGiven: flags.realms !== undefined,
    tokens: resolveTokens(flags, env),
    ...transport,
  };
}
