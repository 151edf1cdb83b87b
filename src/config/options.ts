/**
 * Every option of every command, as data: one list drives commander and the
 * help text (src/cli/options.ts), the README's option table (a test compares
 * them), the defaults and parsers that settings read (valueOf), and the
 * combinations refused (refuseConflicts). `key` is the camelCase property
 * commander gives the parsed value.
 */
import { UsageError } from '../errors.js';
import { parseInteger, parsePositiveNumber, parseRealms } from './values.js';

/** The history database file when --history has no value (history/target.ts reads it from here). */
export const DEFAULT_HISTORY_FILE = 'svc-snapshot-history.sqlite';

export type CommandName = 'snapshot' | 'collect' | 'audit' | 'check' | 'diff' | 'convert' | 'history';

/**
 * Every option of every command, as data (one list drives commander, the help
 * text and the README's option table). `key` is the camelCase property commander
 * gives the parsed value.
 */
export interface OptionRecord {
  readonly flags: string;
  readonly key: string;
  readonly description: string;
  readonly commands: readonly CommandName[];
  readonly env?: string;
  /** The value used when the option is not given; help shows it (written nowhere else). */
  readonly default?: unknown;
  /** How help shows the default when it is not the value itself. */
  readonly defaultText?: string;
  /** Raw text → value; throws a UsageError naming the flag (exit 2). */
  readonly parse?: (raw: string) => unknown;
  readonly repeatable?: boolean;
  /** Options this one cannot be combined with, and why: refused with exit 2 naming them. */
  readonly conflicts?: { readonly keys: readonly string[]; readonly why: string };
}

const LIVE: CommandName[] = ['snapshot', 'collect', 'check'];
const NET: CommandName[] = ['snapshot', 'collect', 'check', 'audit'];
/** What a live run needs and a replay does not take. */
const SERVER_OPTIONS = ['baseUrl', 'token', 'tokenUser', 'tokenTeam', 'tokenDrive', 'tokenVm', 'tokenProject', 'realms'] as const;

const RECORDS = [
  { flags: '--base-url <url>', key: 'baseUrl', description: 'base URL of the platform; the API is at <url>/api', commands: LIVE, env: 'SVC_BASE_URL' },
  { flags: '--token <token>', key: 'token', description: 'API token for every type (SVC_TOKEN wins over it)', commands: LIVE, env: 'SVC_TOKEN' },
  { flags: '--token-user <token>', key: 'tokenUser', description: 'User token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_USER' },
  { flags: '--token-team <token>', key: 'tokenTeam', description: 'Team token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_TEAM' },
  { flags: '--token-drive <token>', key: 'tokenDrive', description: 'Drive token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_DRIVE' },
  { flags: '--token-vm <token>', key: 'tokenVm', description: 'VM token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_VM' },
  { flags: '--token-project <token>', key: 'tokenProject', description: 'Project token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_PROJECT' },
  { flags: '--realms <ids>', key: 'realms', description: 'comma-separated realm ids, used when GET /api/realms is not served', commands: LIVE, default: ['libvirt'], parse: parseRealms },
  { flags: '--audit-url <url>', key: 'auditUrl', description: 'base URL of the audit service', commands: ['audit', 'check'], env: 'SVC_AUDIT_URL' },
  { flags: '--audit-token <token>', key: 'auditToken', description: 'audit service token (SVC_AUDIT_TOKEN wins over it)', commands: ['audit', 'check'], env: 'SVC_AUDIT_TOKEN' },
  { flags: '--from <date>', key: 'from', description: 'first day of the audit period, YYYY-MM-DD', commands: ['audit'], default: '1970-01-01' },
  { flags: '--to <date>', key: 'to', description: 'last day of the audit period, YYYY-MM-DD', commands: ['audit'], default: '2037-12-31' },
  { flags: '--query <id>', key: 'query', description: 'run this audit query (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--param <name=value>', key: 'param', description: 'audit query parameter (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--report <id[:objectId]>', key: 'report', description: 'download this audit report (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--objects <Type[:id,id...]>', key: 'objects', description: 'look up the objects of this type as they were at --to; without ids, all of them (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--audit', key: 'audit', description: 'check the audit service instead of the management API', commands: ['check'] },
  { flags: '--export <name>', key: 'export', description: 'only this export (repeatable)', commands: ['diff'], repeatable: true },
  { flags: '--ignore <column>', key: 'ignore', description: 'ignore changes of this column or export.column (repeatable); the volatile columns of docs/diff.md are ignored by default, --ignore none compares them', commands: ['diff'], repeatable: true },
  { flags: '--timeout <seconds>', key: 'timeout', description: 'seconds allowed for each request, headers and body', commands: NET, default: 30, parse: (raw: string) => parsePositiveNumber('--timeout', raw, 3600) },
  { flags: '--concurrency <n>', key: 'concurrency', description: 'requests in flight at once (1-64)', commands: NET, default: 6, parse: (raw: string) => parseInteger('--concurrency', raw, 1, 64) },
  { flags: '--retries <n>', key: 'retries', description: 'retries of a request after a network error, timeout, 429 or 5xx (0-10)', commands: NET, default: 3, parse: (raw: string) => parseInteger('--retries', raw, 0, 10) },
  { flags: '--ca-file <path>', key: 'caFile', description: 'PEM file of extra trusted CA certificates (NODE_EXTRA_CA_CERTS is honoured too)', commands: [...NET, 'history'] },
  { flags: '--out-dir <dir>', key: 'outDir', description: 'output directory', commands: ['snapshot', 'collect', 'audit', 'convert', 'history'] },
  { flags: '--raw', key: 'raw', description: 'also write the raw collection to <out-dir>/raw/', commands: ['snapshot'] },
  { flags: '--replay <dir>', key: 'replay', description: 'build the exports from a raw collection instead of the network', commands: ['snapshot'], conflicts: { keys: SERVER_OPTIONS, why: 'builds from files and talks to no server' } },
  { flags: '--allow-partial', key: 'allowPartial', description: 'publish even when routes failed (exit 4); history load: load partial snapshots too', commands: ['snapshot', 'history'] },
  { flags: '--strict', key: 'strict', description: 'make any schema problem in a response fatal', commands: ['snapshot'] },
  { flags: '--diff-previous', key: 'diffPrevious', description: 'after publishing, diff against the newest older snapshot beside it', commands: ['snapshot'] },
  { flags: '--format <list>', key: 'format', description: 'comma-separated output formats: json (always written), csv, xlsx', commands: ['snapshot', 'convert'], defaultText: 'snapshot: json; convert: csv,xlsx' },
  { flags: '--keep <n>', key: 'keep', description: 'after a complete run, delete older complete output directories of the same kind beside the new one, keeping the newest n (the new one included)', commands: ['snapshot', 'collect', 'audit'] },
  { flags: '--metrics-file <path>', key: 'metricsFile', description: 'write Prometheus metrics for node_exporter\'s textfile collector to this file, on success and on failure', commands: ['snapshot', 'collect', 'audit'] },
  { flags: '--ping-url <url>', key: 'pingUrl', description: 'heartbeat URL (healthchecks style): GET <url>/start, then <url> on success or <url>/fail on failure', commands: ['snapshot', 'collect', 'audit'] },
  { flags: '--quiet', key: 'quiet', description: 'print nothing on stderr but errors', commands: ['snapshot', 'collect', 'audit', 'check', 'diff', 'convert', 'history'] },
  { flags: '--json', key: 'json', description: 'print one JSON summary object on stdout', commands: ['snapshot', 'collect', 'audit', 'check', 'diff', 'convert', 'history'] },
  { flags: '--debug', key: 'debug', description: 'show stack traces of unexpected errors', commands: ['snapshot', 'collect', 'audit', 'check', 'diff', 'convert', 'history'] },
  { flags: '--history [target]', key: 'history', description: 'history database: a SQLite file or postgres://user@host:port/db (password from PGPASSWORD or ~/.pgpass); snapshot: load the new snapshot into it after publishing', commands: ['snapshot', 'history'], defaultText: `./${DEFAULT_HISTORY_FILE}` },
  { flags: '--site <base-url>', key: 'site', description: 'the site (base URL) to read or load, required when the history database holds several', commands: ['history'] },
] as const satisfies readonly OptionRecord[];

export const OPTIONS: readonly OptionRecord[] = RECORDS;


type Records = (typeof RECORDS)[number];
export type OptionKey = Records['key'];
type RecordOf<K extends OptionKey> = Extract<Records, { key: K }>;
/** The value of an option with a default: its parser's result type, inferred from the record. */
export type ValueOf<K extends OptionKey> = RecordOf<K> extends { parse: (raw: string) => infer T } ? T : RecordOf<K> extends { default: infer D } ? D : string | undefined;

export function optionRecord(key: OptionKey): OptionRecord {
  return OPTIONS.find((o) => o.key === key)!;
}

/** The option's value from the flags: parsed by its record, or its record's default. */
export function valueOf<K extends OptionKey>(key: K, flags: { readonly [P in K]?: unknown }): ValueOf<K> {
  const rec = optionRecord(key);
  const raw: unknown = flags[key];
  if (raw === undefined) return rec.default as ValueOf<K>;
  return (rec.parse && typeof raw === 'string' ? rec.parse(raw) : raw) as ValueOf<K>;
}

/** The flag as typed, from its record: `--base-url`. */
export function flagName(key: string): string {
  const rec = OPTIONS.find((o) => o.key === key);
  // A key without a record is a mistake in the records themselves (the option-records test finds it).
  if (rec === undefined) throw new Error(`no option record has the key ${key}`);
  return rec.flags.split(' ')[0]!;
}

/** Refuses (exit 2) an option given together with one its record says it cannot be combined with. */
export function refuseConflicts(command: CommandName, flags: Readonly<Record<string, unknown>>): void {
  for (const rec of OPTIONS) {
    if (!rec.conflicts || !rec.commands.includes(command) || flags[rec.key] === undefined) continue;
    const given = rec.conflicts.keys.filter((k) => flags[k] !== undefined);
    if (given.length > 0) throw new UsageError(`${flagName(rec.key)} ${rec.conflicts.why}; drop ${given.map(flagName).join(', ')}`);
  }
}
