/**
 * Every option of every command, as data: one list drives commander and the
 * help text (src/cli/options.ts), the README's option table (a test compares
 * them), and readOptions, the one function that turns the records, the flags
 * and the environment into a command's typed options (parsed, defaulted, the
 * environment applied, conflicts refused).
 */
import { UsageError } from '../errors.js';
import { normaliseServiceUrl } from './url.js';
import { registerSecret } from '../util/redact.js';
import { loadSigningKey } from '../sign/key.js';
import { readAllowedSigners } from '../sign/allowed-signers.js';
import { fromTokenFile } from './token-file.js';
import {
  parseAuditToken,
  parseBooleanValue,
  parseCalendarDate,
  parseFormats,
  parseInclude,
  parseInteger,
  parseKeep,
  parseNotifyOn,
  parsePositiveNumber,
  parseRealms,
  parseSample,
  parseSeverity,
  parseToken,
} from './values.js';

/** --report-url: an http(s) URL with a host and no user name, password, query or fragment; no trailing `/`. */
function parseReportUrl(raw: string, from: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`${from} is not a URL; give where the snapshot directories are served, as https://host/path`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '')
    throw new UsageError(`${from} must be an https:// (or http://) URL of where the snapshot directories are served`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw new UsageError(
      `${from} must not hold a user name, password, query or fragment: the digest links <url>/<snapshot-dir-name>/`,
    );
  return url.href.replace(/\/+$/, '');
}

/** The history database file when --history has no value (history/target.ts reads it from here). */
export const DEFAULT_HISTORY_FILE = 'svc-snapshot-history.sqlite';

const ALL = [
  'snapshot',
  'collect',
  'audit',
  'check',
  'diff',
  'convert',
  'history',
  'verify',
  'findings',
  'report',
  'notify',
] as const;
export type CommandName = (typeof ALL)[number];

/** One option of some commands (see the file's opening comment). */
export interface OptionRecord {
  readonly flags: string;
  /** The camelCase property commander gives the flag's value, derived from `flags` (KeyOf). */
  readonly key: string;
  readonly description: string;
  readonly commands: readonly CommandName[];
  /** The environment variable that gives the value when the flag is not given (an empty one counts as unset). */
  readonly env?: string;
  /** The variable wins over the flag: secrets, which a process list would show on a command line. */
  readonly envWins?: boolean;
  /** A token: registered for redaction as soon as it is seen, from the flag and the variable, used or not. */
  readonly secret?: boolean;
  /** The value used when the option is not given; help shows it (written nowhere else). */
  readonly default?: unknown;
  /** A default that differs by command; help shows defaultText. */
  readonly commandDefaults?: Partial<Record<CommandName, unknown>>;
  /** How help shows the default when it is not the value itself. */
  readonly defaultText?: string;
  /** Help text that differs by command: its description and how its default is shown there. */
  readonly perCommand?: Partial<Record<CommandName, { readonly description?: string; readonly defaultText?: string }>>;
  /** Text (of the flag or the variable) → value; throws a UsageError naming `from`, the flag or variable (exit 2). */
  readonly parse?: (raw: string, from: string) => unknown;
  readonly repeatable?: boolean;
  /** Options this one cannot be combined with, and why: refused with exit 2 naming them. */
  readonly conflicts?: { readonly keys: readonly string[]; readonly why: string };
  /**
   * Removed in `release`: giving the flag or setting the variable is a usage
   * error (exit 2) that names the release and says what to do, rather than a
   * setting silently ignored. Help and the README do not show it.
   */
  readonly removed?: { readonly release: string; readonly why: string };
  /** A switch that is on by default: `--no-<flag>` turns it off (help shows both, this text for the `--no-` form). */
  readonly negatable?: { readonly description: string };
}

const LIVE = ['snapshot', 'collect', 'check'] as const;
const NET = ['snapshot', 'collect', 'check', 'audit'] as const;
/** The commands that send a digest after their run (docs/notify.md), and `notify` itself. */
const NOTIFYING = ['snapshot', 'collect', 'audit', 'notify'] as const;
/** What a live run needs and a replay does not take. */
const SERVER_OPTIONS = [
  'baseUrl',
  'token',
  'tokenUser',
  'tokenTeam',
  'tokenDrive',
  'tokenVm',
  'tokenProject',
  'realms',
] as const;

/** --out-dir's default, as help shows it for each command (the commands compute it; see their resolveOutDir calls). */
const OUT_DIR_HELP = {
  snapshot: { defaultText: "./svc-snapshot-<YYYY-MM-DD>; --replay: the collection's date" },
  collect: { defaultText: './svc-snapshot-raw-<YYYY-MM-DD>' },
  audit: { defaultText: './svc-snapshot-audit-<YYYY-MM-DD>' },
  convert: {
    description: 'directory for the spreadsheet files (created 0700 when missing)',
    defaultText: 'the snapshot directory itself',
  },
  history: {
    description: 'as-of: the directory to write the exports to',
    defaultText: './svc-snapshot-<date of that snapshot>',
  },
} as const;

/** convert writes only the spreadsheet forms (json alone is refused there: the JSON files are the snapshot itself). */
const FORMAT_HELP = {
  snapshot: { defaultText: 'json' },
  findings: {
    description: 'csv: one row per finding instead of the text table (docs/findings.md)',
    defaultText: 'text',
  },
  convert: {
    description: 'comma-separated spreadsheet formats: csv, xlsx (the JSON exports are the snapshot itself)',
    defaultText: 'csv,xlsx',
  },
} as const;

/** The token types a backend before 3.14.1 takes one token each for, in help's order. */
const TYPE_TOKENS = ['User', 'Team', 'Drive', 'VM', 'Project'] as const;

/** `--token-vm` / SVC_TOKEN_VM for the type VM, and so on: the record of a per-type token. */
function typeToken<T extends (typeof TYPE_TOKENS)[number]>(type: T) {
  const lower = type.toLowerCase() as Lowercase<T>;
  return {
    flags: `--token-${lower} <token>` as const,
    description: `${type} token, for backends before 3.14.1`,
    commands: LIVE,
    env: `SVC_TOKEN_${type.toUpperCase()}` as `SVC_TOKEN_${Uppercase<T>}`,
    envWins: true,
    secret: true,
    parse: parseToken,
  } as const;
}

/** The records as written: each one's key is derived from its flags (KeyOf). */
const DECLARED = [
  {
    flags: '--base-url <url>',
    description: 'base URL of the platform; the API is at <url>/api',
    commands: LIVE,
    env: 'SVC_BASE_URL',
    parse: (raw: string, from: string) => normaliseServiceUrl(raw, from, true),
  },
  {
    flags: '--token <token>',
    description:
      'API token for every type (SVC_TOKEN wins over it; SVC_TOKEN_FILE, SVC_TOKEN_<TYPE>_FILE and ' +
      'SVC_AUDIT_TOKEN_FILE name a file holding a token instead)',
    commands: LIVE,
    env: 'SVC_TOKEN',
    envWins: true,
    secret: true,
    parse: parseToken,
  },
  ...TYPE_TOKENS.map(typeToken),
  {
    flags: '--realms <ids>',
    description: 'comma-separated realm ids, used when GET /api/realms is not served',
    commands: LIVE,
    default: ['libvirt'],
    parse: parseRealms,
  },
  {
    flags: '--audit-url <url>',
    description: 'base URL of the audit service',
    commands: ['audit', 'check'],
    env: 'SVC_AUDIT_URL',
    parse: (raw: string, from: string) => normaliseServiceUrl(raw, from, false),
  },
  {
    flags: '--audit-token <token>',
    description: 'audit service token (SVC_AUDIT_TOKEN wins over it)',
    commands: ['audit', 'check'],
    env: 'SVC_AUDIT_TOKEN',
    envWins: true,
    secret: true,
    parse: parseAuditToken,
  },
  {
    flags: '--from <date>',
    description: 'first day of the audit period, YYYY-MM-DD',
    commands: ['audit'],
    default: '1970-01-01',
    parse: (raw: string, from: string) => parseCalendarDate(from, raw),
  },
  {
    flags: '--to <date>',
    description: 'last day of the audit period, YYYY-MM-DD',
    commands: ['audit'],
    default: '2037-12-31',
    parse: (raw: string, from: string) => parseCalendarDate(from, raw),
  },
  {
    flags: '--query <id>',
    description: 'run this audit query (repeatable)',
    commands: ['audit'],
    repeatable: true,
  },
  {
    flags: '--param <name=value>',
    description: 'audit query parameter (repeatable)',
    commands: ['audit'],
    repeatable: true,
  },
  {
    flags: '--report <id[:objectId]>',
    description: 'download this audit report (repeatable)',
    commands: ['audit'],
    repeatable: true,
  },
  {
    flags: '--objects <Type[:id,id...]>',
    description: 'look up the objects of this type as they were at --to; without ids, all of them (repeatable)',
    commands: ['audit'],
    repeatable: true,
  },
  {
    flags: '--audit',
    description: 'check the audit service instead of the management API',
    commands: ['check'],
  },
  {
    flags: '--export <name>',
    description: 'only this export (repeatable)',
    commands: ['diff'],
    repeatable: true,
  },
  {
    flags: '--ignore <column>',
    description:
      'ignore changes of this column or export.column (repeatable); the volatile columns of docs/diff.md ' +
      'are ignored by default, --ignore none compares them',
    commands: ['diff'],
    repeatable: true,
  },
  {
    flags: '--timeout <seconds>',
    description: 'seconds allowed for each request, headers and body',
    commands: NET,
    default: 30,
    parse: (raw: string, from: string) => parsePositiveNumber(from, raw, 3600),
  },
  {
    flags: '--concurrency <n>',
    description: 'requests in flight at once (1-64)',
    commands: NET,
    default: 6,
    parse: (raw: string, from: string) => parseInteger(from, raw, 1, 64),
  },
  {
    flags: '--retries <n>',
    description: 'retries of a request after a network error, timeout, 429 or 5xx (0-10)',
    commands: NET,
    default: 3,
    parse: (raw: string, from: string) => parseInteger(from, raw, 0, 10),
  },
  {
    flags: '--ca-file <path>',
    description: 'PEM file of extra trusted CA certificates (NODE_EXTRA_CA_CERTS is honoured too)',
    commands: [...NET, 'history', 'report', 'notify'],
  },
  {
    flags: '--out-dir <dir>',
    description: 'output directory',
    commands: ['snapshot', 'collect', 'audit', 'convert', 'history'],
    perCommand: OUT_DIR_HELP,
  },
  {
    flags: '--raw',
    description: 'also write the raw collection to <out-dir>/raw/',
    commands: ['snapshot'],
  },
  {
    flags: '--replay <dir>',
    description: 'build the exports from a raw collection instead of the network',
    commands: ['snapshot'],
    conflicts: { keys: SERVER_OPTIONS, why: 'builds from files and talks to no server' },
  },
  {
    flags: '--allow-partial',
    description: 'publish even when routes failed (exit 4)',
    commands: ['snapshot', 'history'],
    perCommand: {
      history: { description: 'history load: load partial snapshots too (without it they are skipped, exit 4)' },
    },
  },
  {
    flags: '--build-threads <n>',
    description: 'removed',
    commands: ['snapshot'],
    env: 'SVC_BUILD_THREADS',
    removed: { release: '1.1.0', why: 'the exports are built on the main thread' },
  },
  {
    flags: '--strict',
    description: 'make any schema problem in a response fatal',
    commands: ['snapshot'],
  },
  {
    flags: '--diff-previous',
    description: 'after publishing, diff against the newest older snapshot of the same site beside it',
    commands: ['snapshot'],
  },
  {
    flags: '--format <list>',
    description: 'comma-separated output formats: json (always written), csv, xlsx, html (the report)',
    commands: ['snapshot', 'convert', 'findings'],
    commandDefaults: { snapshot: [], convert: ['csv', 'xlsx'], findings: [] },
    defaultText: 'snapshot: json; convert: csv,xlsx; findings: the text table',
    perCommand: FORMAT_HELP,
    parse: parseFormats,
  },
  {
    flags: '--include <list>',
    description:
      'add export groups after the 15 exports: vms (vm_configs, active_vms, realms); diff and history ' +
      'load build them from a raw collection, and read a snapshot as it holds its exports; convert: the snapshot ' +
      'must hold them',
    commands: ['snapshot', 'convert', 'history', 'diff'],
    default: [],
    defaultText: 'none',
    parse: parseInclude,
  },
  {
    flags: '--keep <n>',
    description:
      'after a complete run, delete older complete output directories of the same kind beside the new ' +
      'one, keeping the newest n (the new one included)',
    commands: ['snapshot', 'collect', 'audit'],
    parse: parseKeep,
  },
  {
    flags: '--metrics-file <path>',
    description:
      "write Prometheus metrics for node_exporter's textfile collector to this file, on success and on failure",
    commands: ['snapshot', 'collect', 'audit'],
  },
  {
    flags: '--ping-url <url>',
    description: 'heartbeat URL (healthchecks style): GET <url>/start, then <url> on success or <url>/fail on failure',
    commands: ['snapshot', 'collect', 'audit'],
    env: 'SVC_PING_URL',
    // Empty is unset (README.md, "Options"), from the flag as from the variable.
    parse: (raw: string, from: string) => (raw.trim() === '' ? undefined : normaliseServiceUrl(raw, from, false)),
  },
  {
    flags: '--sign-key <file>',
    description:
      'sign the manifest with this OpenSSH Ed25519 private key (unencrypted, mode 0600) into <manifest>.sig, published with the output',
    commands: ['snapshot', 'collect', 'audit'],
    env: 'SVC_SIGN_KEY',
    parse: loadSigningKey,
  },
  {
    flags: '--encrypt-to <recipient>',
    description:
      'after publishing, write <out-dir>.tar.age beside it: its tar encrypted with age to this X25519 recipient ' +
      '(age1…; repeatable; SVC_ENCRYPT_TO_FILE names a recipients file as age -R reads it; docs/archives.md)',
    commands: ['snapshot', 'collect', 'audit'],
    repeatable: true,
  },
  {
    flags: '--identity <file>',
    description:
      'an age identity file (age-keygen): decrypt each archive as a stream and check every file in it against its ' +
      'manifest, writing nothing (docs/archives.md)',
    commands: ['verify'],
    env: 'SVC_IDENTITY_FILE',
  },
  {
    flags: '--replay',
    description:
      "restore drill: build the exports again from the snapshot's raw/ (made with --raw), without the network, and " +
      'check each is byte-identical to the published one; an archive needs --identity',
    commands: ['verify'],
  },
  {
    flags: '--sample <n/t>',
    description:
      'check only the n-th of t parts of the directories and archives given, a part fixed by each name ' +
      '(n = 1..t cover each once; nightly: --sample $(( 10#$(date +%j) % 7 + 1 ))/7)',
    commands: ['verify'],
    parse: parseSample,
  },
  {
    flags: '--allowed-signers <file>',
    description:
      'OpenSSH allowed_signers file: a signature must verify and be made by a key it lists (history: only such snapshots are loaded)',
    commands: ['verify', 'history'],
    parse: (raw: string, from: string) => readAllowedSigners(raw, from),
  },
  {
    flags: '--findings',
    description: 'evaluate the findings rules (docs/findings.md) and write _findings.json into the snapshot',
    commands: ['snapshot'],
  },
  {
    flags: '--findings-inherit-levels',
    description:
      "findings: hold a child project to its ancestors' security levels too, its own level adding to them (docs/findings.md)",
    commands: ['snapshot', 'findings', 'report', 'notify'],
    default: true,
    negatable: { description: 'findings: hold a project to its own security level only' },
  },
  {
    flags: '--fail-on <severity>',
    description:
      'exit 6 when a finding of this severity or higher exists that is not waived, or a rule of this severity or ' +
      'higher could not be evaluated (info, low, medium, high, critical); the snapshot is published either way',
    commands: ['snapshot', 'findings'],
    perCommand: {
      findings: {
        description:
          'exit 6 when a finding of this severity or higher exists that is not waived, or a rule of this severity ' +
          'or higher could not be evaluated (info, low, medium, high, critical); the snapshot is read, never changed',
      },
    },
    parse: parseSeverity,
  },
  {
    flags: '--fail-on-unevaluated <boolean>',
    description:
      'with --fail-on: also exit 6 when a rule of that severity or higher could not be evaluated (true), or on findings alone (false)',
    commands: ['snapshot', 'findings'],
    default: true,
    parse: parseBooleanValue,
  },
  {
    flags: '--expiring-days <n>',
    description: "certification-expiring, and waivers ending soon: days ahead of the snapshot's time (0-3650)",
    commands: ['snapshot', 'findings', 'report', 'notify'],
    default: 30,
    parse: (raw: string, from: string) => parseInteger(from, raw, 0, 3650),
  },
  {
    flags: '--notify <target>',
    description:
      'after the run, send its digest to this target (repeatable; SVC_NOTIFY_FILE names a file of targets, one a line): ' +
      'https://… (JSON webhook), alertmanager+https://…, slack+https://…, teams+https://…, smtp://host:587?from=…&to=… ' +
      'or smtps://… (docs/notify.md)',
    commands: NOTIFYING,
    repeatable: true,
  },
  {
    flags: '--report-url <url>',
    description:
      'where the snapshot directories are served (https://…): the digest links <url>/<snapshot-dir-name>/ and the ' +
      'report in it, instead of <hostname>:<path>',
    commands: NOTIFYING,
    env: 'SVC_REPORT_URL',
    parse: parseReportUrl,
  },
  {
    flags: '--notify-on <list>',
    description:
      'comma-separated: when a digest is sent to chat, e-mail and webhooks: failure, changes, findings, or always ' +
      '(a failed run always sends one; Alertmanager gets every run)',
    commands: ['snapshot', 'collect', 'audit'],
    default: ['failure', 'changes', 'findings'],
    defaultText: 'failure,changes,findings',
    parse: parseNotifyOn,
  },
  {
    flags: '--notify-severity <severity>',
    description: 'Alertmanager: the findings at or above this severity are alerts (info, low, medium, high, critical)',
    commands: NOTIFYING,
    default: 'high',
    parse: parseSeverity,
  },
  {
    flags: '--notify-interval <hours>',
    description:
      "Alertmanager: hours an alert keeps firing without the next run's (its endsAt); more than the schedule's",
    commands: NOTIFYING,
    default: 26,
    parse: (raw: string, from: string) => parsePositiveNumber(from, raw, 24 * 366),
  },
  {
    flags: '--notify-timeout <seconds>',
    description:
      'seconds allowed for each target, retries included (1-3600); then a warning, and the exit code is unchanged',
    commands: NOTIFYING,
    default: 30,
    parse: (raw: string, from: string) => parsePositiveNumber(from, raw, 3600, 1),
  },
  {
    flags: '--test',
    description: 'send a short test message to each target and say which worked',
    commands: ['notify'],
  },
  {
    flags: '--waivers <file>',
    description:
      'findings: a YAML or JSON file of waivers (rule, id or subject, reason, owner, expires): a waived finding is ' +
      'kept and marked, and not counted by --fail-on nor svc_snapshot_findings (docs/findings.md)',
    commands: ['snapshot', 'findings', 'report', 'notify'],
    env: 'SVC_WAIVERS',
  },
  {
    flags: '--waivers-max-days <n>',
    description: 'the furthest ahead of today a waiver may end, in days (1-3650)',
    commands: ['snapshot', 'findings', 'report', 'notify'],
    default: 366,
    parse: (raw: string, from: string) => parseInteger(from, raw, 1, 3650),
  },
  { flags: '--quiet', description: 'print nothing on stderr but errors', commands: ALL },
  { flags: '--json', description: 'print one JSON summary object on stdout', commands: ALL },
  { flags: '--debug', description: 'show stack traces of unexpected errors', commands: ALL },
  {
    flags: '--history [target]',
    description:
      'history database: a SQLite file or postgres://user@host:port/db (password from PGPASSWORD or ' +
      "~/.pgpass); snapshot: load the new snapshot into it after publishing (and --format html: the report's " +
      'trends); report: the trends',
    commands: ['snapshot', 'history', 'report'],
    defaultText: `./${DEFAULT_HISTORY_FILE}`,
  },
  {
    flags: '--previous <dir>',
    description: 'the older snapshot to show the changes and the new and resolved findings since',
    commands: ['report', 'findings', 'notify'],
    defaultText: 'the newest older snapshot of the same site beside it',
  },
  {
    flags: '--out <file>',
    description: 'the file to write the page to',
    commands: ['report'],
    defaultText: '<snapshot-dir>/svc-snapshot-<YYYY-MM-DD>.html',
  },
  {
    flags: '--site <base-url>',
    description: 'the site (base URL) to read or load, required when the history database holds several',
    commands: ['history'],
  },
] as const satisfies readonly Omit<OptionRecord, 'key'>[];

/** `base-url` → `baseUrl`. */
type Camel<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
/** A record's key: the property commander gives its flag's value (`--base-url <url>` → `baseUrl`). */
type KeyOf<F extends string> = F extends `--${infer N} ${string}`
  ? Camel<N>
  : F extends `--${infer N}`
    ? Camel<N>
    : never;
type Keyed<R> = R extends { flags: infer F extends string } ? R & { key: KeyOf<F> } : never;
type Records = Keyed<(typeof DECLARED)[number]>;

export const OPTIONS: readonly OptionRecord[] = DECLARED.map((rec) => ({
  ...rec,
  key: rec.flags
    .split(' ')[0]!
    .slice(2)
    .replace(/-(.)/g, (_, c: string) => c.toUpperCase()),
}));
/** What commander gives: a list for a repeatable option, `true` for `[value]` given bare, text for `<value>`, else a switch. */
type RawOf<R> = R extends { repeatable: true }
  ? string[]
  : R extends { flags: `${string}[${string}]` }
    ? string | true
    : R extends { flags: `${string}<${string}>` }
      ? string
      : boolean;
type Parsed<R> = R extends { parse: (raw: string, from: string) => infer T } ? T : RawOf<R>;
type WhenAbsent<R> = R extends { default: infer D }
  ? D
  : R extends { commandDefaults: infer M }
    ? M[keyof M]
    : RawOf<R> extends boolean
      ? false
      : undefined;
type ForCommand<R, C extends CommandName> = R extends { readonly commands: readonly (infer X)[] }
  ? C extends X
    ? R
    : never
  : never;

/** The options of one command, typed from the records: what readOptions returns. */
export type CommandOptions<C extends CommandName> = {
  readonly [R in ForCommand<Records, C> as R['key']]: Parsed<R> | WhenAbsent<R>;
} & {
  /** Where each option given came from: its flag (`--timeout`) or variable (`SVC_TOKEN`); absent for defaults. */
  readonly sources: Readonly<Partial<Record<ForCommand<Records, C>['key'], string>>>;
};

/** The flag as typed, from its record: `--base-url`. */
export function flagName(key: string): string {
  const rec = OPTIONS.find((o) => o.key === key);
  // A key without a record is a mistake in the records themselves (the option-records test finds it).
  if (rec === undefined) throw new Error(`no option record has the key ${key}`);
  return rec.flags.split(' ')[0]!;
}

/** The `--no-` form of a negatable switch: `--no-findings-inherit-levels`. */
export function negatedFlag(rec: OptionRecord): string {
  return `--no-${rec.flags.split(' ')[0]!.slice(2)}`;
}

/** Refuses (exit 2) an option given together with one its record says it cannot be combined with. */
export function refuseConflicts(command: CommandName, flags: Readonly<Record<string, unknown>>): void {
  for (const rec of OPTIONS) {
    if (!rec.conflicts || !rec.commands.includes(command) || flags[rec.key] === undefined) continue;
    const given = rec.conflicts.keys.filter((k) => flags[k] !== undefined);
    if (given.length > 0)
      throw new UsageError(`${flagName(rec.key)} ${rec.conflicts.why}; drop ${given.map(flagName).join(', ')}`);
  }
}

/** Refuses (exit 2) a removed option given as a flag or set as its variable, naming the release that removed it. */
function refuseRemoved(command: CommandName, flags: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): void {
  for (const rec of OPTIONS) {
    if (!rec.removed || !rec.commands.includes(command)) continue;
    const { release, why } = rec.removed;
    if (flags[rec.key] !== undefined)
      throw new UsageError(
        `${flagName(rec.key)} was removed in svc-snapshot ${release} (${why}); drop it (CHANGELOG.md)`,
      );
    if (rec.env !== undefined && env[rec.env] !== undefined && env[rec.env] !== '')
      throw new UsageError(`${rec.env} was removed in svc-snapshot ${release} (${why}); unset it (CHANGELOG.md)`);
  }
}

/**
 * Records + flags (as commander gives them) + environment → the command's
 * typed options. Per option: the flag, else its variable when set and not
 * empty (a record with envWins takes the variable first); parsed by the
 * record's parser, which names where the text came from; else the record's
 * default (a switch is false). Removed options and conflicts are refused
 * here, before anything else. A value is parsed when the command first
 * reads it, so that a bad variable the command does not use
 * (SVC_AUDIT_TOKEN for a snapshot, SVC_TOKEN for --replay) stops nothing;
 * every secret, read or not, is registered for redaction at once.
 */
export function readOptions<C extends CommandName>(
  command: C,
  flags: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv,
): CommandOptions<C> {
  refuseRemoved(command, flags, env);
  refuseConflicts(command, flags);
  const options: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const rec of OPTIONS) {
    if (!rec.commands.includes(command)) continue;
    const flag = flags[rec.key];
    const variable = rec.env !== undefined && env[rec.env] !== '' ? env[rec.env] : undefined;
    if (rec.secret)
      for (const text of [flag, variable]) if (typeof text === 'string' && text !== '') registerSecret(text);
    // A secret's file variable (SVC_TOKEN_FILE: src/config/token-file.ts) stands for its variable, read when the command reads the option.
    const fileVariable = rec.secret && rec.env !== undefined ? `${rec.env}_FILE` : undefined;
    const file = fileVariable !== undefined && env[fileVariable] !== '' ? env[fileVariable] : undefined;
    if (file !== undefined) {
      sources[rec.key] = fileVariable!;
      defineLazy(options, rec.key, () => fromTokenFile(rec.env!, file, variable !== undefined, rec.parse));
      continue;
    }
    const useVariable = variable !== undefined && (rec.envWins === true || flag === undefined);
    const raw = useVariable ? variable : flag;
    if (raw === undefined) {
      options[rec.key] = rec.commandDefaults?.[command] ?? rec.default ?? (/[<[]/.test(rec.flags) ? undefined : false);
      continue;
    }
    const source = useVariable ? rec.env! : raw === false && rec.negatable ? negatedFlag(rec) : flagName(rec.key);
    sources[rec.key] = source;
    const parse = rec.parse;
    if (parse === undefined || typeof raw !== 'string') {
      options[rec.key] = raw;
      continue;
    }
    defineLazy(options, rec.key, () => parse(raw, source));
  }
  options.sources = sources;
  return options as CommandOptions<C>;
}

/** `key` of `target` as `compute` gives it when first read, then kept. */
function defineLazy(target: object, key: string, compute: () => unknown): void {
  let computed: { value: unknown } | undefined;
  Object.defineProperty(target, key, { enumerable: true, get: () => (computed ??= { value: compute() }).value });
}
