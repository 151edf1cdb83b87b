/**
 * What became of each target's message, and how a run tells of it: the
 * `--json` summary's `notify` list, the metrics' rows, and for a target that
 * failed a warning, or with --quiet an error line (cron mails those).
 */
import type { NotifyOutcome } from '../summaries/schemas.js';

/** What became of one target's message: the `--json` summary's `notify` entry, a line of `notify --test`. */
export interface SinkResult {
  /** The metrics' `sink` label: kind and host. */
  readonly sink: string;
  /** `<kind> #<n>`: how every message to a person names the target. */
  readonly target: string;
  /** Sent, or not sent because --notify-on did not ask for this run. */
  readonly state: 'sent' | 'skipped' | 'failed';
  readonly why?: string;
}

/** Where a run tells of a target that failed: a warning, or with --quiet an error line (both never hold its URL). */
export interface FailureOut {
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Tells of each target that failed: with --quiet an error line
 * `notify: <kind> #<n> failed: <reason>` (cron mails it), else a warning that
 * also names the sink's kind and host. The run's exit code is not changed.
 */
export function tellFailures(results: readonly SinkResult[], out: FailureOut, quiet: boolean): void {
  for (const r of results) {
    if (r.state !== 'failed') continue;
    const why = r.why ?? 'unknown reason';
    if (quiet) out.error(`notify: ${r.target} failed: ${why}`);
    else out.warn(`notify: ${r.target} (${r.sink}) failed: ${why}; the run's outcome is unchanged`);
  }
}

/** The metrics' rows: one per target, by its sink name. */
export function metricRows(results: readonly SinkResult[]): Array<{ sink: string; failed: number }> {
  return results.map((r) => ({ sink: r.sink, failed: r.state === 'failed' ? 1 : 0 }));
}

/** The summary's `notify` list: each target by its `<kind> #<n>`, whether it took the message, and why not. */
export function summaryOutcomes(results: readonly SinkResult[]): NotifyOutcome[] {
  return results.map((r) => ({
    sink: r.sink,
    target: r.target,
    ok: r.state !== 'failed',
    error: r.state === 'failed' ? (r.why ?? 'unknown reason') : null,
  }));
}
