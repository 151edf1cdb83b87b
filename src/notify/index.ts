/**
 * Notifications (docs/notify.md): the targets and settings read before
 * the run (a bad one is a usage error before any request), and after it one
 * digest sent to every target at once, each within its deadline. A target
 * that fails is a warning naming the sink and a count in the metrics; it
 * never changes the run's exit code or what was published.
 */
import { readOrProblem, UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import { trustStore, type NotifyOn, type Severity } from '../config/values.js';
import { buildDigest, worthSending, type Digest, type RunNotice } from './digest.js';
import { alertsOf, emailContent, slackPayload, teamsPayload, webhookPayload, type PostableAlert } from './formats.js';
import { alertmanagerPosts, Deadline, notifyDispatcher, postAll, sendEmail, webhookPost } from './send.js';
import { readHmacKey, readTargets, type HttpTarget, type Target } from './targets.js';
import type { Dispatcher } from 'undici';
import type { SinkResult } from './outcomes.js';

export type NotifyCommand = 'snapshot' | 'collect' | 'audit' | 'notify';

export interface NotifySettings {
  readonly targets: readonly Target[];
  readonly hmacKey: string | undefined;
  readonly on: readonly NotifyOn[];
  readonly severity: Severity;
  readonly intervalHours: number;
  readonly timeoutMs: number;
  readonly ca: readonly string[] | undefined;
  /** --report-url (SVC_REPORT_URL): where the snapshot directories are served, for the digest's link. */
  readonly reportUrl: string | undefined;
}

/**
 * The notification settings of a run, every value parsed now; undefined when
 * no target is given. The other --notify-* options without a target would do
 * nothing, which a job would not notice: a usage error.
 */
export function notifySettings(
  command: NotifyCommand,
  flags: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv,
  problems?: string[],
): NotifySettings | undefined {
  const picked = {
    notify: flags.notify,
    notifyOn: flags.notifyOn,
    notifySeverity: flags.notifySeverity,
    notifyInterval: flags.notifyInterval,
    notifyTimeout: flags.notifyTimeout,
    caFile: flags.caFile,
    reportUrl: flags.reportUrl,
  };
  const o = readOptions(command, picked, env) as ReturnType<typeof readOptions<'snapshot'>>;
  // Read (so checked) now, with or without a target: a bad --report-url is a usage error before the run, or with
  // `problems` (a run that publishes) a problem said there, the digest then linking as without it.
  const reportUrl = readOrProblem(() => o.reportUrl, problems);
  const targets = readTargets(o.notify, env, problems);
  if (targets.length === 0) {
    const given = (['notifyOn', 'notifySeverity', 'notifyInterval', 'notifyTimeout'] as const)
      .map((k) => o.sources[k])
      .find((s) => s !== undefined);
    if (given !== undefined && command !== 'notify')
      throw new UsageError(`${given} needs a target: --notify <target> or SVC_NOTIFY_FILE`);
    return undefined;
  }
  return {
    targets,
    hmacKey: readHmacKey(env),
    on: o.notifyOn ?? ['failure', 'changes', 'findings'],
    severity: o.notifySeverity,
    intervalHours: o.notifyInterval,
    timeoutMs: o.notifyTimeout * 1000,
    ca: trustStore(o.caFile, env),
    reportUrl,
  };
}

interface SendContext {
  readonly s: NotifySettings;
  readonly dispatcher: Dispatcher;
  readonly now: Date;
  readonly test: boolean;
}

/** A short test message: the digest of nothing, titled as a test (`notify --test`). */
export function testDigest(site: string, now: Date): Digest {
  return {
    ...buildDigest({ command: 'snapshot', site, time: now.toISOString(), exitCode: 0, outDir: '' }),
    test: true,
  };
}

function testAlert(d: Digest, now: Date): PostableAlert {
  return {
    labels: { alertname: 'SvcSnapshotTest', severity: 'info', site: d.site },
    annotations: { summary: 'svc-snapshot notify --test: this Alertmanager receives its alerts' },
    startsAt: now.toISOString(),
    endsAt: new Date(now.getTime() + 5 * 60_000).toISOString(),
  };
}

async function sendTo(t: Target, d: Digest, c: SendContext): Promise<SinkResult> {
  const deadline = new Deadline(c.s.timeoutMs);
  const named = { sink: t.name, target: t.label };
  // A re-run fires and ends nothing: the newest night of the site already said what is firing.
  if (t.kind === 'alertmanager' && d.rerun && !c.test) return { ...named, state: 'skipped' };
  // Alertmanager holds state, not messages: every run renews or ends its alerts, whatever --notify-on says.
  if (t.kind !== 'alertmanager' && !c.test && !worthSending(d, c.s.on)) return { ...named, state: 'skipped' };
  let why: string | undefined;
  if (t.kind === 'email') why = await sendEmail(t, emailContent(d), c.s.ca, deadline);
  else why = await postAll(c.dispatcher, httpPosts(t, d, c), deadline);
  return why === undefined ? { ...named, state: 'sent' } : { ...named, state: 'failed', why };
}

function httpPosts(t: HttpTarget, d: Digest, c: SendContext) {
  switch (t.kind) {
    case 'alertmanager': {
      const alerts = c.test
        ? [testAlert(d, c.now)]
        : alertsOf(d, { severity: c.s.severity, intervalHours: c.s.intervalHours, now: c.now });
      return alertmanagerPosts(t, alerts);
    }
    case 'slack':
      return [{ url: t.url, body: JSON.stringify(slackPayload(d)) }];
    case 'teams':
      return [{ url: t.url, body: JSON.stringify(teamsPayload(d)) }];
    default:
      return [webhookPost(t, webhookPayload(d), c.s.hmacKey, c.now)];
  }
}

/** Sends the digest to every target at once; resolves with each one's result, never rejects. */
export async function deliver(
  d: Digest,
  s: NotifySettings,
  opts: { readonly now: Date; readonly test?: boolean },
): Promise<SinkResult[]> {
  const dispatcher = notifyDispatcher(s.ca, s.timeoutMs);
  const c: SendContext = { s, dispatcher, now: opts.now, test: opts.test === true };
  try {
    return await Promise.all(
      s.targets.map((t) =>
        sendTo(t, d, c).catch((err: unknown) => ({
          sink: t.name,
          target: t.label,
          state: 'failed' as const,
          why: `could not be sent (${(err as Error).name})`,
        })),
      ),
    );
  } finally {
    await dispatcher.close().catch(() => {});
  }
}

/** The run's digest sent (after its outcome is known); each target's result. */
export async function notifyRun(notice: RunNotice, s: NotifySettings, now: Date = new Date()): Promise<SinkResult[]> {
  return deliver(buildDigest(notice, s.reportUrl), s, { now });
}
