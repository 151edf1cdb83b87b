import { TOKEN_TYPES, type TokenType } from '../api/catalog.js';
import type { AuthMode } from '../api/route-record.js';
import { UsageError } from '../errors.js';
import type { ResolvedToken } from './values.js';
import { flagName, OPTIONS } from './options.js';

/** The token options (the option records give their precedence: each variable wins over its flag). */
export type TokenKey = 'token' | ReturnType<typeof keyOf<TokenType>>;

export interface TokenPlan {
  readonly byType: Readonly<Partial<Record<TokenType, ResolvedToken>>>;
  readonly authMode: AuthMode;
  /** Every distinct secret in use, for the leak scan. */
  readonly secrets: readonly string[];
}

/** `tokenVm` for the type VM: the key the option records derive from `--token-vm`. */
const keyOf = <T extends TokenType>(type: T) =>
  `token${type[0]}${type.slice(1).toLowerCase()}` as `token${Capitalize<Lowercase<T>>}`;

/** `--token-vm`, from the option record. */
export function tokenFlagName(type: TokenType): string {
  return flagName(keyOf(type));
}

/** `SVC_TOKEN_VM`, from the option record. */
export function tokenEnvName(type: TokenType): string {
  return OPTIONS.find((o) => o.key === keyOf(type))!.env!;
}

/**
 * The token precedence (README.md, "Options"): for a route of type T, the
 * first present of SVC_TOKEN_T, --token-T, SVC_TOKEN, --token. Each variable
 * winning over its flag is in the option records (envWins); the per-type
 * token winning over the general one is here.
 */
export function resolveTokens(o: Readonly<Record<TokenKey, ResolvedToken | undefined>>): TokenPlan {
  const general = o.token;
  const byType: Partial<Record<TokenType, ResolvedToken>> = {};
  for (const type of TOKEN_TYPES) {
    const t = o[keyOf(type)] ?? general;
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
