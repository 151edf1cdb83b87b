import type { TokenPlan, TokenKey } from './tokens.js';
import { resolveTokens } from './tokens.js';
import { checkProxyEnvironment } from './proxy.js';
import { trustStore } from './values.js';
import type { CommandOptions } from './options.js';
import { UsageError } from '../errors.js';

/** What every command that talks to the management API needs. */
export interface ConnectionSettings extends Transport {
  /** Normalised, without trailing `/` or `/api`. */
  readonly baseUrl: string;
  readonly tokens: TokenPlan;
  /** Realms to read when GET /api/realms is not served. */
  readonly realms: readonly string[];
  /** --realms was given (it only matters where GET /api/realms is not served). */
  readonly realmsGiven: boolean;
}

/** The options a live run reads, as readOptions gives them (snapshot, collect and check all take them). */
export type ConnectionOptions = Pick<
  CommandOptions<'collect'>,
  TokenKey | 'baseUrl' | 'realms' | 'timeout' | 'concurrency' | 'retries' | 'caFile' | 'sources'
>;
/** The transport options, shared with the audit service's client. */
export type TransportOptions = Pick<CommandOptions<'audit'>, 'timeout' | 'concurrency' | 'retries' | 'caFile'>;

/** The transport settings of the management and audit clients; `ca` is the full trust store with --ca-file, else undefined (Node's default). */
export type Transport = Readonly<ReturnType<typeof resolveTransport>>;

/** Transport options shared by the management and audit clients. */
export function resolveTransport(o: TransportOptions, env: NodeJS.ProcessEnv) {
  checkProxyEnvironment(env);
  return {
    timeoutMs: o.timeout * 1000,
    concurrency: o.concurrency,
    retries: o.retries,
    ca: trustStore(o.caFile, env),
  };
}

/** What a live run connects with; the flags and the environment were read by readOptions (tokens: the environment wins). */
export function resolveConnection(o: ConnectionOptions, env: NodeJS.ProcessEnv): ConnectionSettings {
  const transport = resolveTransport(o, env);
  if (o.baseUrl === undefined) {
    throw new UsageError('no base URL given: pass --base-url https://platform.example.org or set SVC_BASE_URL');
  }
  return {
    baseUrl: o.baseUrl,
    realms: o.realms,
    realmsGiven: o.sources.realms !== undefined,
    tokens: resolveTokens(o),
    ...transport,
  };
}
