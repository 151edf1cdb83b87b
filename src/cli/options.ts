import { Option } from 'commander';

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
  readonly defaultText?: string;
  readonly repeatable?: boolean;
}

const LIVE: CommandName[] = ['snapshot', 'collect', 'check'];
const NET: CommandName[] = ['snapshot', 'collect', 'check', 'audit'];

export const OPTIONS: readonly OptionRecord[] = [
  { flags: '--base-url <url>', key: 'baseUrl', description: 'base URL of the platform; the API is at <url>/api', commands: LIVE, env: 'SVC_BASE_URL' },
  { flags: '--token <token>', key: 'token', description: 'API token for every type (SVC_TOKEN wins over it)', commands: LIVE, env: 'SVC_TOKEN' },
  { flags: '--token-user <token>', key: 'tokenUser', description: 'User token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_USER' },
  { flags: '--token-team <token>', key: 'tokenTeam', description: 'Team token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_TEAM' },
  { flags: '--token-drive <token>', key: 'tokenDrive', description: 'Drive token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_DRIVE' },
  { flags: '--token-vm <token>', key: 'tokenVm', description: 'VM token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_VM' },
  { flags: '--token-project <token>', key: 'tokenProject', description: 'Project token, for backends before 3.14.1', commands: LIVE, env: 'SVC_TOKEN_PROJECT' },
  { flags: '--realms <ids>', key: 'realms', description: 'comma-separated realm ids, used when GET /api/realms is not served', commands: LIVE, defaultText: 'libvirt' },
  { flags: '--audit-url <url>', key: 'auditUrl', description: 'base URL of the audit service', commands: ['audit', 'check'], env: 'SVC_AUDIT_URL' },
  { flags: '--audit-token <token>', key: 'auditToken', description: 'audit service token (SVC_AUDIT_TOKEN wins over it)', commands: ['audit', 'check'], env: 'SVC_AUDIT_TOKEN' },
  { flags: '--from <date>', key: 'from', description: 'first day of the audit period, YYYY-MM-DD', commands: ['audit'], defaultText: '1970-01-01' },
  { flags: '--to <date>', key: 'to', description: 'last day of the audit period, YYYY-MM-DD', commands: ['audit'], defaultText: '2037-12-31' },
  { flags: '--query <id>', key: 'query', description: 'run this audit query (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--param <name=value>', key: 'param', description: 'audit query parameter (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--report <id[:objectId]>', key: 'report', description: 'download this audit report (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--objects <Type[:id,id...]>', key: 'objects', description: 'look up the objects of this type as they were at --to; without ids, all of them (repeatable)', commands: ['audit'], repeatable: true },
  { flags: '--audit', key: 'audit', description: 'check the audit service instead of the management API', commands: ['check'] },
  { flags: '--export <name>', key: 'export', description: 'only this export (repeatable)', commands: ['diff'], repeatable: true },
  { flags: '--ignore <column>', key: 'ignore', description: 'ignore changes of this column or export.column (repeatable); the volatile columns of docs/diff.md are ignored by default, --ignore none compares them', commands: ['diff'], repeatable: true },
  { flags: '--timeout <seconds>', key: 'timeout', description: 'seconds allowed for each request, headers and body', commands: NET, defaultText: '30' },
  { flags: '--concurrency <n>', key: 'concurrency', description: 'requests in flight at once (1-64)', commands: NET, defaultText: '6' },
  { flags: '--retries <n>', key: 'retries', description: 'retries of a request after a network error, timeout, 429 or 5xx (0-10)', commands: NET, defaultText: '3' },
  { flags: '--ca-file <path>', key: 'caFile', description: 'PEM file of extra trusted CA certificates (NODE_EXTRA_CA_CERTS is honoured too)', commands: [...NET, 'history'] },
  { flags: '--out-dir <dir>', key: 'outDir', description: 'output directory', commands: ['snapshot', 'collect', 'audit', 'convert', 'history'] },
  { flags: '--raw', key: 'raw', description: 'also write the raw collection to <out-dir>/raw/', commands: ['snapshot'] },
  { flags: '--replay <dir>', key: 'replay', description: 'build the exports from a raw collection instead of the network', commands: ['snapshot'] },
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
  { flags: '--history [target]', key: 'history', description: 'history database: a SQLite file or postgres://user@host:port/db (password from PGPASSWORD or ~/.pgpass); snapshot: load the new snapshot into it after publishing', commands: ['snapshot', 'history'], defaultText: './svc-snapshot-history.sqlite' },
  { flags: '--site <base-url>', key: 'site', description: 'the site (base URL) to read or load, required when the history database holds several', commands: ['history'] },
];

export function optionsFor(command: CommandName): Option[] {
  return OPTIONS.filter((o) => o.commands.includes(command)).map((o) => {
    const extra = [o.env ? `env ${o.env}` : '', o.defaultText ? `default ${o.defaultText}` : ''].filter(Boolean).join('; ');
    const option = new Option(o.flags, extra ? `${o.description} (${extra})` : o.description);
    return o.repeatable ? option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]) : option;
  });
}
