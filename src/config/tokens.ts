import { TOKEN_TYPES, type TokenType } from '../api/catalog.js';
import type { AuthMode } from '../api/route-record.js';
import { UsageError } from '../errors.js';
import { registerSecret } from '../util/redact.js';

export interface TokenFlags {
  token?: string;
  tokenUser?: string;
  tokenTeam?: string;
  tokenDrive?: string;
  tokenVm?: string;
  tokenProject?: string;
}

export interface ResolvedToken {
  /** The secret. Never printed, logged or written. */
  readonly value: string;
  /** Where it came from (`SVC_TOKEN_VM`, `--token`, …): safe to print. */
  readonly source: string;
}

export interface TokenPlan {
  readonly byType: Readonly<Partial<Record<TokenType, ResolvedToken>>>;
  readonly authMode: AuthMode;
  /** Every distinct secret in use, for the leak scan. */
  readonly secrets: readonly string[];
}

const FLAG_OF: Record<TokenType, keyof TokenFlags> = {
  User: 'tokenUser',
  Team: 'tokenTeam',
  Drive: 'tokenDrive',
  VM: 'tokenVm',
  Project: 'tokenProject',
};

export function tokenFlagName(type: TokenType): string {
  return `--token-${type.toLowerCase()}`;
}

export function tokenEnvName(type: TokenType): string {
  return `SVC_TOKEN_${type.toUpperCase()}`;
}

// A cookie value may not hold whitespace, quotes, commas, semicolons or backslashes (RFC 6265).
const COOKIE_SAFE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]+$/;

function candidate(source: string, value: string | undefined): ResolvedToken | undefined {
  if (value === undefined || value === '') return undefined;
  registerSecret(value);
  if (!COOKIE_SAFE.test(value)) {
    throw new UsageError(
      `the token in ${source} contains spaces, quotes, commas, semicolons, backslashes or control characters, ` +
        'which no API token has; check for a trailing newline or stray quotes where it is set',
    );
  }
  return { value, source };
}

/**
 * The token precedence of CONTRACT section 2, in one place: for a route of type
 * T, the first present of SVC_TOKEN_T, --token-T, SVC_TOKEN, --token. An
 * environment token wins over the flag of the same kind.
 */
export function resolveTokens(flags: TokenFlags, env: NodeJS.ProcessEnv): TokenPlan {
  const general = candidate('SVC_TOKEN', env.SVC_TOKEN) ?? candidate('--token', flags.token);
  const byType: Partial<Record<TokenType, ResolvedToken>> = {};
  for (const type of TOKEN_TYPES) {
    const t =
      candidate(tokenEnvName(type), env[tokenEnvName(type)]) ??
      candidate(tokenFlagName(type), flags[FLAG_OF[type]]) ??
      general;
    if (t) byType[type] = t;
  }
  const resolved = Object.values(byType);
  if (resolved.length === 0) {
    throw new UsageError(
      'no API token given: set SVC_TOKEN (or pass --token) with a token that reaches every type, ' +
        'or, for backends before 3.14.1, one per type with SVC_TOKEN_USER, SVC_TOKEN_TEAM, SVC_TOKEN_DRIVE, SVC_TOKEN_VM, SVC_TOKEN_PROJECT',
    );
  }
  const allGeneral = general !== undefined && TOKEN_TYPES.every((t) => byType[t] === general);
  return {
    byType,
    authMode: allGeneral ? 'token' : 'per-type',
    secrets: [...new Set(resolved.map((t) => t.value))],
  };
}
