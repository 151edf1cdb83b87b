import { Command, CommanderError } from 'commander';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { DomainError, InterruptedError, TokenRejectedError, UsageError } from '../errors.js';
import { optionsFor, type CommandName } from './options.js';
// From its module, not publish/index.js: that one reaches zod, which --help must not load.
import { currentOutcome, installSignalHandlers, publishLedger, resetPublishLedger } from '../publish/registry.js';
import type { FailureSummary } from '../summaries/schemas.js';
import { plainReporter, type Reporter } from '../progress/reporter.js';
import { ttyReporter } from '../progress/tty.js';
import { forTerminal } from '../util/terminal.js';
import { describeFsError } from '../util/fs-error.js';
import { TOOL } from '../version.js';
import type { CommandDeps, CommandResult } from '../commands/context.js';
import type { RunReport } from '../cron/metrics.js';
import type { CronCommand, CronRun } from '../cron/run.js';
import type { RunFacts } from '../cron/facts.js';
import type { RunNotice } from '../notify/digest.js';
import type { NotifySettings } from '../notify/index.js';
import type { notifyRunSync } from '../notify/signal.js';
import { metricRows, summaryOutcomes, tellFailures } from '../notify/outcomes.js';
import type { NotifyOutcome } from '../summaries/schemas.js';

type Runner = (flags: Record<string, unknown>, args: string[], deps: CommandDeps) => Promise<CommandResult>;

interface CommandSpec {
  name: CommandName;
  /** One line of the top-level help (at most 62 characters, so that it fits 80 columns beside the name). */
  short: string;
  /** The first line of the command's own help. */
  summary: string;
  args?: string;
  examples: string[];
  isDefault?: boolean;
  run: Runner;
}

const COMMANDS: CommandSpec[] = [
  {
    name: 'snapshot',
    short: 'write the 15 exports and their manifest (the default)',
    isDefault: true,
    summary: 'write the 15 exports and _snapshot-manifest.json (the default command)',
    examples: [
      'SVC_TOKEN=… svc-snapshot --base-url https://platform.example.org',
      'svc-snapshot --replay svc-snapshot-raw-2026-11-21',
      'svc-snapshot --base-url https://platform.example.org --raw --out-dir /var/lib/svc/snapshots/$(date +%F)',
      'svc-snapshot --base-url https://platform.example.org --raw --encrypt-to age1…   # and <dir>.tar.age beside it',
    ],
    // Loaded on use: `--help` and `--version` start without zod, undici and the catalogs.
    run: async (flags, _args, deps) => (await import('../commands/snapshot.js')).runSnapshot(flags, deps),
  },
  {
    name: 'collect',
    short: "write every read route's response as it came, with a manifest",
    summary: 'fetch every read route and write the responses untouched, with _collection-manifest.json',
    examples: [
      'SVC_TOKEN=… svc-snapshot collect --base-url https://platform.example.org',
      'svc-snapshot collect --base-url https://platform.example.org --ca-file /etc/ssl/site-ca.pem --out-dir /var/lib/svc/raw',
    ],
    run: async (flags, _args, deps) => (await import('../commands/collect.js')).runCollect(flags, deps),
  },
  {
    name: 'audit',
    short: 'collect from the audit service',
    summary: 'collect capabilities, alerts, queries and reports from the audit service',
    examples: [
      'SVC_AUDIT_TOKEN=… svc-snapshot audit --audit-url https://audit.example.org --from 2026-11-01 --to 2026-11-21',
      'svc-snapshot audit --audit-url https://audit.example.org --query logins --param user=alice --report monthly',
      'svc-snapshot audit --audit-url https://audit.example.org --objects User:alice,bob --objects Drive',
    ],
    run: async (flags, _args, deps) => (await import('../commands/audit.js')).runAudit(flags, deps),
  },
  {
    name: 'check',
    short: 'check the base URL, TLS and tokens before a job is scheduled',
    summary: 'check the base URL, TLS, every token and the realms before a job is scheduled; writes nothing',
    examples: [
      'SVC_TOKEN=… svc-snapshot check --base-url https://platform.example.org',
      'svc-snapshot check --base-url https://platform.example.org --ca-file /etc/ssl/site-ca.pem --json',
    ],
    run: async (flags, _args, deps) => (await import('../commands/check.js')).runCheck(flags, deps),
  },
  {
    name: 'diff',
    short: 'what changed between two snapshots (exit 5 when something did)',
    args: '<older> <newer>',
    summary: 'what changed between two snapshots (or raw collections): exit 0 nothing, 5 something changed',
    examples: [
      'svc-snapshot diff svc-snapshot-2026-11-21 svc-snapshot-2026-11-22   # exit 5: something changed',
      'svc-snapshot diff svc-snapshot-2026-11-21 svc-snapshot-2026-11-22 --export users --export team_memberships --json',
      'svc-snapshot diff svc-snapshot-2026-11-21 svc-snapshot-2026-11-22 --ignore none   # lastLogin, sizeOnDisk too (docs/diff.md)',
      'svc-snapshot diff svc-snapshot-2026-11-21 svc-snapshot-2026-11-22 --ignore drives.state --ignore comment   # column, or export.column',
    ],
    run: async (flags, args, deps) => (await import('../commands/diff.js')).runDiff(flags, args, deps),
  },
  {
    name: 'convert',
    short: 'write the CSV and XLSX forms of a snapshot',
    args: '<snapshot-dir>',
    summary: 'write the spreadsheet forms (CSV per export, one XLSX workbook) of an existing snapshot',
    examples: [
      'svc-snapshot convert svc-snapshot-2026-11-21                       # csv and xlsx, beside the exports',
      'svc-snapshot convert svc-snapshot-2026-11-21 --format xlsx --out-dir /srv/share/inventory',
    ],
    run: async (flags, args, deps) => (await import('../commands/convert.js')).runConvert(flags, args, deps),
  },
  {
    name: 'findings',
    short: 'what to act on in a snapshot: access, certifications, quotas',
    args: '<snapshot-dir>',
    summary:
      'what an auditor must act on in an existing snapshot: certification gaps, expired access, quotas (docs/findings.md); writes nothing',
    examples: [
      'svc-snapshot findings svc-snapshot-2026-11-21',
      'svc-snapshot findings svc-snapshot-2026-11-21 --json --expiring-days 60',
      'svc-snapshot findings svc-snapshot-2026-11-21 --fail-on high   # exit 6 when a high or critical finding exists',
    ],
    run: async (flags, args, deps) => (await import('../commands/findings.js')).runFindings(flags, args, deps),
  },
  {
    name: 'history',
    short: 'the history database: load, runs, log, as-of',
    args: '<action> [args...]',
    summary: 'the history database: load <dir>..., runs, log <export> <key>..., as-of <YYYY-MM-DD> (docs/history.md)',
    examples: [
      'svc-snapshot history load svc-snapshot-2026-11-*   # into ./svc-snapshot-history.sqlite',
      'svc-snapshot history load svc-snapshot-2026-11-* --history=/var/lib/svc/history.sqlite',
      'svc-snapshot history runs --history=postgres://svc@db.example.org:5432/inventory?sslmode=verify-full --json',
      'svc-snapshot history log users 42 --history=/var/lib/svc/history.sqlite',
      'svc-snapshot history log team_memberships team-7 user-42 --site https://platform.example.org',
      'svc-snapshot history as-of 2026-11-22 --out-dir restored-2026-11-22',
    ],
    run: async (flags, args, deps) => (await import('../commands/history.js')).runHistory(flags, args, deps),
  },
  {
    name: 'report',
    short: 'write the HTML report page of a snapshot',
    args: '<snapshot-dir>',
    summary:
      'write the report page of an existing snapshot: findings, changes since the previous one, trends (one self-contained HTML file)',
    examples: [
      'svc-snapshot report svc-snapshot-2026-11-21                # svc-snapshot-2026-11-21.html in that directory',
      'svc-snapshot report svc-snapshot-2026-11-22 --previous svc-snapshot-2026-11-21 --out last-night.html',
      'svc-snapshot report svc-snapshot-2026-11-22 --history=/var/lib/svc/history.sqlite --out /srv/share/last-night.html',
    ],
    run: async (flags, args, deps) => (await import('../commands/report.js')).runReport(flags, args, deps),
  },
  {
    name: 'notify',
    short: "send a snapshot's digest again, or a test message (--test)",
    args: '[snapshot-dir]',
    summary:
      'send the digest of an existing snapshot to the --notify targets again, or with --test a test message (docs/notify.md)',
    examples: [
      'svc-snapshot notify --test --notify slack+https://hooks.slack.com/services/…   # says which targets worked',
      'SVC_NOTIFY_FILE=/etc/svc-snapshot/notify svc-snapshot notify svc-snapshot-2026-11-22 --report-url https://reports.example.org/svc',
    ],
    run: async (flags, args, deps) => (await import('../commands/notify.js')).runNotify(flags, args, deps),
  },
  {
    name: 'verify',
    short: 'check outputs and archives against manifests and signatures',
    args: '<dir|archive...>',
    summary:
      'check snapshots, raw collections, audit collections and their .tar.age archives against their manifests and ' +
      'signatures; --replay rebuilds the exports from raw/ (docs/archives.md); writes nothing',
    examples: [
      'svc-snapshot verify svc-snapshot-2026-11-21',
      'svc-snapshot verify /archive/svc-snapshot-2026-* --allowed-signers /etc/svc-snapshot/allowed_signers --json',
      'svc-snapshot verify svc-snapshot-2026-11-21.tar.age --identity restore-key.txt --replay',
      'svc-snapshot verify --sample $(( 10#$(date +%j) % 7 + 1 ))/7 /backup/*.tar.age --identity restore-key.txt',
    ],
    run: async (flags, args, deps) => (await import('../commands/verify.js')).runVerify(flags, args, deps),
  },
];
const COMMAND_NAMES: readonly string[] = COMMANDS.map((c) => c.name);

/** Whether a command has printed on stdout: a failure's --json object is printed only when nothing was. */
let stdoutUsed = false;

/** `hold`, when given, takes the text instead of stdout (a --json summary completed after the notifications). */
function makeDeps(reporter: Reporter, facts?: RunFacts, hold?: (text: string) => void): CommandDeps {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => {
      stdoutUsed = true;
      if (hold) {
        hold(text);
        return true;
      }
      return process.stdout.write(forTerminal(text));
    },
    reporter,
    now: () => new Date(),
    ...(facts ? { facts } : {}),
  };
}

export function buildProgram(
  onRun: (spec: CommandSpec, flags: Record<string, unknown>, args: string[]) => Promise<void>,
): Command {
  const program = new Command('svc-snapshot')
    .description('Inventory snapshots of the platform through its management REST API, and audit service collections.')
    .version(TOOL.version, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // One line a command: its bare name, then what it does.
    .configureHelp({ subcommandTerm: (cmd) => cmd.name() })
    .configureOutput({
      writeErr: (s) => process.stderr.write(forTerminal(withoutOptionValue(s))),
      writeOut: (s) => process.stdout.write(s),
    });
  for (const spec of COMMANDS) {
    const cmd = program
      .command(spec.args ? `${spec.name} ${spec.args}` : spec.name, { isDefault: spec.isDefault })
      .summary(spec.short)
      .description(spec.summary)
      .exitOverride()
      .showHelpAfterError('(run with --help for usage)')
      .addHelpText('after', `\nExamples:\n${spec.examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    for (const o of optionsFor(spec.name)) cmd.addOption(o);
    cmd.action(async (...params: unknown[]) => {
      const command = params[params.length - 1] as Command;
      await onRun(spec, command.opts(), command.args);
    });
  }
  program.addHelpText(
    'after',
    '\nWithout a command, svc-snapshot runs snapshot.\n' +
      'Options and examples of a command: svc-snapshot <command> --help\n' +
      'Documentation: README.md and docs/ (installed with the package)\n',
  );
  return program;
}

/** The one mapping of an error from below to an exit code (README.md, "Exit codes"). */
export function exitCodeOf(err: DomainError): ExitCode {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof TokenRejectedError) return EXIT.tokenRejected;
  if (err instanceof InterruptedError) return err.signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
  // FailedError, and any other: the run failed and nothing was published.
  return EXIT.failed;
}

/** The one top-level catch: every error becomes an exit code and a message without secrets. */
export async function main(argv: string[]): Promise<number> {
  // A reader that goes away (`| head`) must not crash a run that is publishing:
  // further output is dropped and the run finishes. Output that cannot be
  // written otherwise (a full disk where it is redirected) is lost: said, and exit 1.
  let outputLost = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || outputLost) return;
      outputLost = true;
      if (stream === process.stdout)
        process.stderr.write(
          `svc-snapshot: error: standard output could not be written (${err.code ?? 'error'}: ` +
            `${forTerminal(err.message.replace(/^\w+: /, '').replace(/, write$/, ''))}); ` +
            'free space where it is redirected, or redirect it elsewhere\n',
        );
      if (!process.exitCode) process.exitCode = EXIT.failed;
    });
  }
  stdoutUsed = false;
  resetPublishLedger();
  const run = new Invocation(argv, dropTlsOverride());
  const uninstall = installSignalHandlers((_signal, error) => run.interrupted(error));
  const program = buildProgram((spec, flags, args) => run.start(spec, flags, args));
  try {
    checkCommandName(argv[2]);
    await program.parseAsync(argv);
  } catch (err) {
    run.failed(err);
  }
  try {
    await run.finish();
  } finally {
    uninstall();
  }
  return outputLost && run.exitCode === EXIT.ok ? EXIT.failed : run.exitCode;
}

/**
 * Every TLS connection sets rejectUnauthorized itself; the variable is also
 * removed so that nothing in the process (and no Node warning) acts on it.
 * True when it asked to turn verification off, which the run then says it ignores.
 */
function dropTlsOverride(): boolean {
  const off = process.env.NODE_TLS_REJECT_UNAUTHORIZED === '0';
  delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  return off;
}

function checkCommandName(first: string | undefined): void {
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && !COMMAND_NAMES.includes(first)) {
    // Repeated only when it reads as a mistyped command: a token or a target URL given first is a secret.
    const named = /^[a-z]{1,20}$/.test(first) ? ` "${first}"` : '';
    throw new UsageError(
      `unknown command${named}; the commands are ${COMMAND_NAMES.join(', ')} (snapshot is the default)`,
    );
  }
}

/**
 * Commander's message for an unknown option repeats it as typed: the value
 * of `--name=value` may be a secret (a token, a --notify target given to a
 * command that does not take it), so only the name is kept.
 */
function withoutOptionValue(message: string): string {
  return message.replace(/^(error: unknown option '-[^=\n']*)=.*'/m, "$1=…'");
}

/** What one run of the program shares between the command, a signal and the top-level catch, up to its exit code. */
class Invocation {
  exitCode: number = EXIT.ok;
  private debug: boolean;
  private quiet = false;
  /** --json: a run that ends with an error prints one object too (failureSummary, below). */
  private json: boolean;
  /** --json with --notify: the summary, printed once the notifications' outcomes are in it. */
  private heldSummary: string | undefined;
  private command: string;
  private failureText = '';
  private reporter: Reporter = plainReporter((l) => process.stderr.write(l), false);
  /** --metrics-file and --ping-url: opened once the flags are parsed, finished whatever the outcome. */
  private cron: CronRun | undefined;
  private report: RunReport | undefined;
  private facts: RunFacts | undefined;
  /** --notify (or SVC_NOTIFY_FILE): read before the command runs, the digest sent once the outcome is known. */
  private notify: { settings: NotifySettings; site: string | undefined; sendSync: typeof notifyRunSync } | undefined;
  private notice: RunNotice | undefined;
  /** Notification targets or --report-url that cannot be used: said before the run, in the digest, exit 2 at the end. */
  private notifyProblems: string[] = [];

  constructor(
    argv: string[],
    private readonly tlsOffIgnored: boolean,
  ) {
    this.debug = argv.includes('--debug');
    this.json = argv.includes('--json');
    this.command = commandOf(argv.slice(2), COMMAND_NAMES);
  }

  /** Commander's action, once the flags are parsed: the reporter, the cron side, then the command itself. */
  async start(spec: CommandSpec, flags: Record<string, unknown>, args: string[]): Promise<void> {
    this.debug = Boolean(flags.debug);
    this.quiet = Boolean(flags.quiet);
    this.json = Boolean(flags.json);
    this.command = spec.name === 'history' && typeof args[0] === 'string' ? `history ${args[0]}` : spec.name;
    // A live display on a terminal, plain lines otherwise (cron, pipes, CI).
    const stderr = process.stderr;
    this.reporter =
      stderr.isTTY && process.env.TERM !== 'dumb' && !process.env.CI
        ? ttyReporter(stderr, Boolean(flags.quiet))
        : plainReporter((l) => stderr.write(l), Boolean(flags.quiet));
    if (this.tlsOffIgnored) {
      this.reporter.warn(
        'NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored: certificates and host names are always verified (for an internal CA, use --ca-file)',
      );
    }
    this.facts = await this.openCron(spec, flags);
    await this.openNotify(spec, flags);
    // Each command reads its options with readOptions (src/config/options.ts), which refuses conflicting ones first.
    const hold = this.json && this.notify ? (text: string) => void (this.heldSummary = text) : undefined;
    const result = await spec.run(flags, args, makeDeps(this.reporter, this.facts, hold));
    // A problem of what comes after publishing costs a line and exit 2, not the run's output.
    const published =
      result.exitCode === EXIT.ok || result.exitCode === EXIT.incomplete || result.exitCode === EXIT.findings;
    this.exitCode = this.notifyProblems.length > 0 && published ? EXIT.usage : result.exitCode;
    this.report = result.report;
    this.notice =
      result.notice && this.notifyProblems.length > 0
        ? { ...result.notice, problems: [...(result.notice.problems ?? []), ...this.notifyProblems] }
        : result.notice;
  }

  /** --notify, SVC_NOTIFY_FILE and --report-url on the commands that send a digest: a bad one is a usage error before any request. */
  private async openNotify(spec: CommandSpec, flags: Record<string, unknown>): Promise<void> {
    if (spec.name !== 'snapshot' && spec.name !== 'collect' && spec.name !== 'audit') return;
    // --report-url (SVC_REPORT_URL) is checked here too: a bad one is a usage error before anything runs.
    const asked = Object.keys(flags).some(
      (k) => (k.startsWith('notify') || k === 'reportUrl') && flags[k] !== undefined,
    );
    if (!asked && !process.env.SVC_NOTIFY_FILE && !process.env.SVC_REPORT_URL) return;
    const { notifySettings } = await import('../notify/index.js');
    const settings = notifySettings(spec.name, flags, process.env, this.notifyProblems);
    for (const p of this.notifyProblems) this.reporter.error(`${p}; the run goes on without it, exit 2 at the end`);
    if (!settings) return;
    const [{ siteOf }, { notifyRunSync: sendSync }] = await Promise.all([
      import('../cron/run.js'),
      import('../notify/signal.js'),
    ]);
    this.notify = { settings, site: siteOf(spec.name, flags, process.env), sendSync };
  }

  /**
   * The digest of the run: the command's notice, or what a failed run knew.
   * A target that failed is a warning (an error line with --quiet) and a row
   * of the metrics; the exit code stays.
   */
  private async sendDigest(): Promise<RunReport | undefined> {
    if (!this.notify) return this.report;
    const { notifyRun } = await import('../notify/index.js');
    const notice = this.notice ?? this.failureNotice(this.notify.site);
    try {
      const results = await notifyRun(notice, this.notify.settings);
      tellFailures(results, this.reporter, this.quiet);
      this.printHeldSummary(summaryOutcomes(results));
      return { ...(this.report ?? this.facts?.report()), notifyFailures: metricRows(results) };
    } catch (err) {
      // A notification never changes the run's outcome, whatever went wrong in it.
      this.printHeldSummary(
        this.notify.settings.targets.map((t) => ({ sink: t.name, target: t.label, ok: false, error: 'not sent' })),
      );
      this.reporter.warn(
        `the notifications could not be sent (${(err as Error).name}); the run's outcome is unchanged`,
      );
      return this.report;
    }
  }

  /** The held --json summary, with each target's outcome as `notify`. */
  private printHeldSummary(outcomes: readonly NotifyOutcome[]): void {
    const text = this.heldSummary;
    this.heldSummary = undefined;
    if (text === undefined) return;
    let out = text;
    try {
      out = `${JSON.stringify({ ...(JSON.parse(text) as object), notify: outcomes }, null, 2)}\n`;
    } catch {
      // Not one JSON object: printed as the command wrote it.
    }
    process.stdout.write(forTerminal(out));
  }

  /** What a run that ended without the command's notice knew: its exit code and why. */
  private failureNotice(site: string | undefined): RunNotice {
    return {
      command: this.command as RunNotice['command'],
      site: this.facts?.site ?? site,
      time: new Date().toISOString(),
      exitCode: this.exitCode,
      failure: this.failureText,
    };
  }

  /** --metrics-file and --ping-url (or SVC_PING_URL): the run's facts, counted from here on, for the cron side. */
  private async openCron(spec: CommandSpec, flags: Record<string, unknown>): Promise<RunFacts | undefined> {
    if (flags.metricsFile === undefined && flags.pingUrl === undefined && !process.env.SVC_PING_URL) return undefined;
    const out = { warn: (m: string) => this.reporter.warn(m), error: (m: string) => this.reporter.error(m) };
    const [{ CronRun }, { RunFacts: Facts, countRoutes }] = await Promise.all([
      import('../cron/run.js'),
      import('../cron/facts.js'),
    ]);
    // What a failed or interrupted run knew, for its metrics: the routes counted as they end, the rest told by the command.
    const facts = new Facts();
    this.reporter = countRoutes(this.reporter, facts);
    // Commander accepts these two flags only on the commands that take them (and readOptions reads SVC_PING_URL only for those).
    this.cron = CronRun.open(spec.name as CronCommand, flags, process.cwd(), out, facts, process.env);
    await this.cron?.start(flags, process.env);
    return facts;
  }

  /** A signal ended the run (the publish registry has cleaned up): its exit code. */
  interrupted(error: InterruptedError): number {
    const code = exitCodeOf(error);
    this.reporter.close();
    process.stderr.write(`svc-snapshot: ${forTerminal(error.message)}\n`);
    this.failureText = error.message;
    this.exitCode = code;
    let notifyFailures: Array<{ sink: string; failed: number }> | undefined;
    let outcomes: NotifyOutcome[] | undefined;
    if (this.notify) {
      const { settings, site, sendSync } = this.notify;
      const results = sendSync(this.failureNotice(site), settings);
      tellFailures(results, this.reporter, this.quiet);
      notifyFailures = metricRows(results);
      outcomes = summaryOutcomes(results);
    }
    this.printFailure(code, outcomes);
    this.cron?.finishSync(code, notifyFailures);
    return code;
  }

  /** An error out of the command line or the command: its exit code and message. */
  failed(err: unknown): void {
    this.reporter.close();
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      this.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      this.failureText = withoutOptionValue(err.message).replace(/^error: /, '');
    } else if (err instanceof DomainError) {
      this.reporter.error(err.message);
      this.exitCode = exitCodeOf(err);
      this.failureText = err.message;
      if (this.exitCode === EXIT.usage) process.stderr.write('svc-snapshot: run with --help for usage\n');
    } else {
      const fsMessage = describeFsError(err);
      const message = err instanceof Error ? err.message : String(err);
      this.failureText = fsMessage ?? `unexpected failure: ${message}; nothing was published`;
      this.reporter.error(this.failureText);
      if (this.debug && err instanceof Error && err.stack) process.stderr.write(`${forTerminal(err.stack)}\n`);
      this.exitCode = EXIT.failed;
    }
    this.printFailure(this.exitCode);
  }

  /** The cron side's metrics and ping, whatever the outcome. */
  async finish(): Promise<void> {
    const report = await this.sendDigest();
    this.printHeldSummary([]);
    await this.cron?.finish(this.exitCode, report);
  }

  /**
   * The --json object of a failed run. With --notify it is held until the
   * digest is sent (printHeldSummary adds each target's outcome), unless the
   * outcomes are given (a signal's run, which sent it already).
   */
  private printFailure(code: number, outcomes?: readonly NotifyOutcome[]): void {
    if (!this.json || code === EXIT.ok || stdoutUsed) return;
    stdoutUsed = true;
    const summary = failureSummary(this.command, code, this.failureText);
    const text = `${JSON.stringify(outcomes ? { ...summary, notify: outcomes } : summary, null, 2)}\n`;
    if (this.notify && outcomes === undefined) this.heldSummary = text;
    else process.stdout.write(forTerminal(text));
  }
}

/**
 * The --json object of a run that ends with an error (docs/summary-schema.json,
 * `$defs.failure`): printed by the top-level catch and by the signal handler,
 * so that a script reading stdout gets one object whatever happened.
 */

const HISTORY_ACTIONS = ['load', 'runs', 'log', 'as-of'];

/** The command as typed, from the arguments alone (a parse error comes before any command runs): snapshot when none is named. */
function commandOf(args: readonly string[], commands: readonly string[]): string {
  const [first, action] = args.filter((a) => !a.startsWith('-'));
  if (first === undefined || !commands.includes(first)) return 'snapshot';
  if (first !== 'history') return first;
  return action !== undefined && HISTORY_ACTIONS.includes(action) ? `history ${action}` : 'history';
}

function failureSummary(command: string, exitCode: number, error: string): FailureSummary {
  const { published, notPublished } = publishLedger();
  const outcome =
    currentOutcome() ?? (published.length > 0 ? `published ${published.join(', ')}` : 'nothing was published');
  return { command, ok: false, exitCode, error, published, notPublished, outcome };
}
