import path from 'node:path';
import { readSmallFile } from '../util/safe-read.js';
import { normaliseSite } from '../config/url.js';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { UsageError } from '../errors.js';
import { trustStore } from '../config/values.js';
import { readOptions } from '../config/options.js';
import { readLastSuccess, readPreviousSite, renderMetrics, writeMetricsFile, type RunReport } from './metrics.js';
import { RunFacts } from './facts.js';
import { PING_TIMEOUT_MS, sendPing, sendPingSync, type PingTarget } from './ping.js';

/** Where messages go: warnings are silent with --quiet, errors never. */
export interface CronOutput {
  warn(message: string): void;
  error(message: string): void;
}

/** The commands that take --metrics-file and --ping-url. */
export type CronCommand = 'snapshot' | 'collect' | 'audit';

/** The flags as commander gives them: the options the run owes a scheduler are read from them here, before the command's own. */
export type CronFlags = Readonly<Record<string, unknown>>;

/**
 * What a run owes a scheduler (docs/cron.md): the metrics file and the
 * heartbeat, whatever the outcome. `main` opens it once the flags are parsed
 * and finishes it with the exit code, or from the signal handler.
 */
export class CronRun {
  private readonly started = Date.now();
  private ping: PingTarget | undefined;
  private finished = false;

  private constructor(
    private readonly command: CronCommand,
    private readonly metricsFile: string | undefined,
    private readonly out: CronOutput,
    private readonly facts: RunFacts,
    private readonly flagSite: string | undefined,
  ) {}

  /**
   * Undefined when neither option is given (--ping-url also by SVC_PING_URL). The metrics path is taken
   * as is, so that a usage error below is still recorded.
   */
  static open(
    command: CronCommand,
    flags: CronFlags,
    cwd: string,
    out: CronOutput,
    facts = new RunFacts(),
    env: NodeJS.ProcessEnv = {},
  ): CronRun | undefined {
    const o = readOptions(command, { metricsFile: flags.metricsFile, pingUrl: flags.pingUrl }, env);
    if (o.metricsFile === undefined && o.pingUrl === undefined) return undefined;
    let metricsFile: string | undefined;
    if (o.metricsFile !== undefined) {
      if (o.metricsFile.trim() === '' || o.metricsFile.endsWith('/')) {
        throw new UsageError(
          '--metrics-file needs a file path, e.g. /var/lib/node_exporter/textfile_collector/svc-snapshot.prom',
        );
      }
      metricsFile = path.resolve(cwd, o.metricsFile);
    }
    return new CronRun(command, metricsFile, out, facts, siteOf(command, flags, env));
  }

  /**
   * Checks --ping-url (a usage error is recorded in the metrics) and sends the
   * start ping. Only the options a ping needs are read here (none of them can
   * conflict); the command reads its own, and refuses conflicts, after the
   * start ping, so that a usage error still sends the failure ping.
   */
  async start(flags: CronFlags, env: NodeJS.ProcessEnv): Promise<void> {
    const o = readOptions(this.command, { pingUrl: flags.pingUrl, caFile: flags.caFile, timeout: flags.timeout }, env);
    if (o.pingUrl === undefined) return;
    this.ping = { url: o.pingUrl, ca: trustStore(o.caFile, env), timeoutMs: PING_TIMEOUT_MS };
    // A bad --timeout is the command's usage error, which the failure ping reports with the default timeout.
    this.ping = { ...this.ping, timeoutMs: Math.min(PING_TIMEOUT_MS, o.timeout * 1000) };
    const warning = await sendPing(this.ping, 'start');
    if (warning) this.out.warn(warning);
  }

  /**
   * Writes the metrics and sends the success or failure ping; never throws.
   * Finished only once the ping is answered: a signal meanwhile (finishSync)
   * writes the metrics again with its exit code, which is the process's.
   */
  async finish(exitCode: number, report?: RunReport): Promise<void> {
    if (this.finished) return;
    this.writeMetrics(exitCode, report ?? this.facts.report());
    if (this.ping) {
      const warning = await sendPing(this.ping, exitCode === 0 ? 'success' : 'fail');
      if (warning) this.out.warn(warning);
    }
    this.finished = true;
  }

  /** The same from a signal handler: synchronous, then the process exits. */
  finishSync(exitCode: number, notifyFailures?: ReadonlyArray<{ sink: string; failed: number }>): void {
    if (this.finished) return;
    this.finished = true;
    const report = this.facts.report();
    this.writeMetrics(exitCode, notifyFailures ? { ...report, notifyFailures } : report);
    if (this.ping) {
      const warning = sendPingSync(this.ping, 'fail');
      if (warning) this.out.warn(warning);
    }
  }

  private writeMetrics(exitCode: number, report: RunReport | undefined): void {
    if (!this.metricsFile) return;
    const endedAt = new Date();
    // Only a complete run is a success: exit 4 published incomplete data; exit 6 (--fail-on) published a complete snapshot with findings.
    // Before the run knows its site (a usage error with no base URL): the previous file's (one file per command and site),
    // else the file's name, which keeps its series apart from other files' in the directory.
    const known = this.facts.site ?? this.flagSite;
    const site =
      known ?? readPreviousSite(this.metricsFile, this.command) ?? `unknown (${path.basename(this.metricsFile)})`;
    const lastSuccess =
      exitCode === 0 || exitCode === 6
        ? Math.round(endedAt.getTime()) / 1000
        : readLastSuccess(this.metricsFile, this.command, known);
    try {
      writeMetricsFile(
        this.metricsFile,
        renderMetrics({
          command: this.command,
          site,
          exitCode,
          endedAt,
          durationMs: endedAt.getTime() - this.started,
          lastSuccess,
          report,
        }),
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      // An error, not a warning: --quiet must not hide that monitoring is blind.
      this.out.error(
        `could not write the metrics file ${this.metricsFile} (${code}); check that its directory exists and is writable by this user`,
      );
    }
  }
}

/**
 * The site as configured, before anything is read from a server: --base-url
 * (audit: --audit-url), or with --replay the collection's manifest's
 * `baseUrl`, normalised as a site is keyed; undefined when neither tells it.
 * It labels a failed run's metrics and alert, also when the run stopped on
 * its configuration, so that the next good run of the site ends that alert.
 */
export function siteOf(command: CronCommand, flags: CronFlags, env: NodeJS.ProcessEnv): string | undefined {
  try {
    if (command === 'audit') return readOptions(command, { auditUrl: flags.auditUrl }, env).auditUrl;
    if (typeof flags.replay === 'string' && flags.replay !== '') return replayedSite(flags.replay);
    return readOptions(command, { baseUrl: flags.baseUrl }, env).baseUrl;
  } catch {
    // Invalid: the command says so (a usage error); the metrics name the site by the file until a command knows it.
    return undefined;
  }
}

/** The `baseUrl` of a replayed collection's manifest (read leniently: the command checks it), normalised. */
function replayedSite(dir: string): string | undefined {
  const bytes = readSmallFile(path.join(dir, COLLECTION_MANIFEST), { maxBytes: 64 * 1024 * 1024, followLinks: true });
  if (!Buffer.isBuffer(bytes)) return undefined;
  try {
    const baseUrl = (JSON.parse(bytes.toString('utf8')) as { baseUrl?: unknown }).baseUrl;
    return typeof baseUrl === 'string' && baseUrl !== '' ? normaliseSite(baseUrl) : undefined;
  } catch {
    return undefined;
  }
}
