/**
 * The digest of a run stopped by SIGINT or SIGTERM (a
 * failed run sends one too). A signal handler ends the process without
 * going back to the event loop, so the digest is sent by a child process
 * (./notify-child.js) while this one waits, bounded by --notify-timeout, as
 * the cron side's `/fail` ping is (src/cron/ping.ts). The settings, target
 * URLs included, go to the child on its stdin, never in its arguments or
 * environment.
 */
import { runChildSync } from '../util/child-sync.js';
import type { RunNotice } from './digest.js';
import type { NotifySettings } from './index.js';
import type { SinkResult } from './outcomes.js';

/** What the child prints on stdout: each target's result. */
export interface ChildResult {
  readonly results: readonly SinkResult[];
}

/**
 * Sends the digest of `notice` to every target, synchronously; each target's
 * result. When the sending process itself fails, every target failed, and why.
 */
export function notifyRunSync(notice: RunNotice, s: NotifySettings, now: Date = new Date()): SinkResult[] {
  const input = { notice, settings: s, now: now.toISOString() };
  // The child's own deadline is --notify-timeout; this one only stops a child that hangs past it.
  const res = runChildSync(new URL('./notify-child.js', import.meta.url), input, s.timeoutMs + 5000);
  let result: ChildResult | undefined;
  try {
    if (res.status === 0) result = JSON.parse(res.stdout) as ChildResult;
  } catch {
    result = undefined;
  }
  if (result === undefined) {
    const why =
      res.error !== undefined || res.signal !== null
        ? `within --notify-timeout (${s.timeoutMs / 1000} s)`
        : `(the process sending them exited ${res.status})`;
    return s.targets.map((t) => ({
      sink: t.name,
      target: t.label,
      state: 'failed',
      why: `the notifications of the interrupted run could not be sent ${why}`,
    }));
  }
  return [...result.results];
}
