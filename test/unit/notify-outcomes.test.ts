/**
 * How a run tells of each target's outcome: with --quiet a failed target is
 * an error line (cron mails errors only), without it a warning naming the
 * sink's kind and host; the --json summary lists every target as
 * `<kind> #<n>`.
 */
import { describe, expect, it } from 'vitest';
import { summaryOutcomes, tellFailures, type SinkResult } from '../../src/notify/outcomes.js';

const RESULTS: SinkResult[] = [
  { sink: 'slack hooks.slack.com', target: 'slack #1', state: 'sent' },
  { sink: 'email mail.example.org:587', target: 'email #2', state: 'failed', why: 'connection refused' },
  { sink: 'webhook hooks.example.org', target: 'webhook #3', state: 'skipped' },
];

function told(quiet: boolean): { warn: string[]; error: string[] } {
  const out = { warn: [] as string[], error: [] as string[] };
  tellFailures(RESULTS, { warn: (m) => out.warn.push(m), error: (m) => out.error.push(m) }, quiet);
  return out;
}

describe('a target that failed', () => {
  it('with --quiet is one error line: notify: <kind> #<n> failed: <reason>', () => {
    expect(told(true)).toEqual({ warn: [], error: ['notify: email #2 failed: connection refused'] });
  });

  it('without --quiet is a warning that also names the sink, and says the outcome stays', () => {
    expect(told(false)).toEqual({
      warn: [
        "notify: email #2 (email mail.example.org:587) failed: connection refused; the run's outcome is unchanged",
      ],
      error: [],
    });
  });
});

describe("the summary's notify list", () => {
  it('has every target, ok or not, with why not', () => {
    expect(summaryOutcomes(RESULTS)).toEqual([
      { sink: 'slack hooks.slack.com', target: 'slack #1', ok: true, error: null },
      { sink: 'email mail.example.org:587', target: 'email #2', ok: false, error: 'connection refused' },
      { sink: 'webhook hooks.example.org', target: 'webhook #3', ok: true, error: null },
    ]);
  });
});
