/**
 * The night and the night before, through the binary over the three shipped
 * nights with recordings/waivers.yaml, each published into a directory named
 * as an admin's own `--out-dir …/$(date +%F)` would be: the night before is
 * found by the manifests; one night has one set of counts in the summary,
 * `_findings.json`, `findings --json`, the report, the digest and the
 * metrics; a re-run is named and fires nothing at Alertmanager; a failed
 * run's alert carries the site and the next good run ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTestCerts } from '../fake/certs.js';
import { startPingReceiver, type PingReceiver } from '../helpers/ping-receiver.js';
import { ALERTMANAGER, startAlertmanager, type Alertmanager } from '../helpers/notify-receivers.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';

const NIGHTS = ['platform-3.14.1', 'platform-3.14.1-night2', 'platform-3.14.1-night3'].map((n) =>
  join(REPO_ROOT, 'recordings', n),
);
const DATES = ['2026-11-21', '2026-11-22', '2026-11-23'];
const WAIVERS = join(REPO_ROOT, 'recordings', 'waivers.yaml');
const SITE = 'https://platform.example.org';
const certs = getTestCerts();
const available = existsSync(ALERTMANAGER);
if (!available && process.env.CI) throw new Error('prometheus-alertmanager is not installed');

interface Counts {
  new: number;
  open: number;
  resolved: number;
  waived: number;
  active: number;
}

let hook: PingReceiver;
let am: Alertmanager;
let parent: string;
const summaries: Array<{ findings?: Counts; rerun?: unknown; previous?: unknown }> = [];

function night(i: number, out: string, extra: string[] = []) {
  return runCli([
    '--replay',
    NIGHTS[i]!,
    '--out-dir',
    join(parent, out),
    '--findings',
    '--format',
    'html',
    '--waivers',
    WAIVERS,
    '--json',
    '--ca-file',
    certs.caFile,
    '--metrics-file',
    join(parent, `${out}.prom`),
    '--notify',
    `${hook.url}/in/hook`,
    '--notify',
    `alertmanager+${am.url}`,
    '--notify-on',
    'always',
    ...extra,
  ]);
}

beforeAll(async () => {
  if (!available) return;
  [hook, am] = await Promise.all([startPingReceiver(undefined, certs), startAlertmanager()]);
  parent = tmpDir('svc-night-');
  for (const i of [0, 1, 2]) {
    const res = await night(i, DATES[i]!);
    expect(res.code, res.stderr).toBe(0);
    summaries.push(JSON.parse(res.stdout));
  }
}, 180_000);
afterAll(async () => {
  await Promise.all([hook, am].map((r) => r?.close()));
});

/** The counts as the definitions give them, from the findings `_findings.json` lists (not from its counts). */
function countedFromLists(report: {
  findings: Array<{ state?: string; waived?: unknown }>;
  resolved?: unknown[];
}): Counts {
  const waived = report.findings.filter((f) => f.waived !== undefined).length;
  return {
    new: report.findings.filter((f) => f.state === 'new').length,
    open: report.findings.filter((f) => f.state === 'open').length,
    resolved: (report.resolved ?? []).length,
    waived,
    active: report.findings.length - waived,
  };
}

describe.skipIf(!available)('three nights in directories of their own names', () => {
  it('finds each night before by its manifest: night 2 and 3 have states, night 3 resolved findings', () => {
    const file = JSON.parse(readFileSync(join(parent, DATES[2]!, '_findings.json'), 'utf8'));
    expect(file.previous).toEqual({ time: '2026-11-22T02:00:00.000Z', source: 'snapshot' });
    expect(summaries[1]!.findings!.open).toBeGreaterThan(0);
    expect(summaries[2]!.findings!.resolved).toBeGreaterThan(0);
  });

  it('gives night 3 the same five numbers in all six outputs', async () => {
    const dir = join(parent, DATES[2]!);
    const file = JSON.parse(readFileSync(join(dir, '_findings.json'), 'utf8'));
    const expected = countedFromLists(file);
    // Every kind of finding is there, so that a count mixed up with another shows.
    for (const k of ['new', 'open', 'resolved', 'waived'] as const) expect(expected[k]).toBeGreaterThan(0);
    expect(expected.active).toBe(expected.new + expected.open - expected.waived);

    expect(summaries[2]!.findings).toEqual(expected);
    expect(file.counts).toEqual(expected);
    const again = await runCli(['findings', dir, '--waivers', WAIVERS, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).counts).toEqual(expected);
    const text = `${expected.new} new, ${expected.open} open, ${expected.resolved} resolved, ${expected.waived} waived, ${expected.active} active`;
    const page = readFileSync(join(dir, `svc-snapshot-${DATES[2]}.html`), 'utf8');
    expect(page).toContain(text);
    const digest = JSON.parse(hook.received.at(-1)!.body);
    expect(digest.outDir).toBe(dir);
    expect(digest.findings.counts).toEqual(expected);
    const metrics = readFileSync(join(parent, `${DATES[2]}.prom`), 'utf8');
    for (const [state, n] of Object.entries(expected))
      expect(metrics).toContain(
        `svc_snapshot_findings_by_state{command="snapshot",site="${SITE}",state="${state}"} ${n}`,
      );
  });

  it('publishes night 2 run again after night 3 as a re-run, told against night 1, with nothing for Alertmanager', async () => {
    const before = await am.alerts();
    const sent = hook.received.length;
    const res = await night(1, 'night-2-again');
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary.rerun).toEqual({ of: DATES[1], newer: DATES[2] });
    // Its own night before (night 1): the same states as when night 2 was first published.
    expect(summary.findings).toEqual(summaries[1]!.findings);
    expect(res.stderr).toContain(`re-run of ${DATES[1]}: ${DATES[2]} is newer`);
    const page = readFileSync(join(parent, 'night-2-again', `svc-snapshot-${DATES[1]}.html`), 'utf8');
    expect(page).toContain(`re-run of ${DATES[1]}: ${DATES[2]} is newer`);
    // The webhook gets the digest, which says so; Alertmanager's alerts are as night 3 left them.
    expect(hook.received).toHaveLength(sent + 1);
    expect(JSON.parse(hook.received.at(-1)!.body).rerun).toEqual({ of: DATES[1], newer: DATES[2] });
    const after = await am.alerts();
    const view = (list: typeof before) =>
      list.map((a) => `${a.labels.alertname} ${a.labels.id ?? ''} ${a.endsAt}`).sort();
    expect(view(after)).toEqual(view(before));
  }, 120_000);

  it('labels a failed run by the configured site, and the next good run ends its alert', async () => {
    // Stopped on its configuration, before the collection is read.
    const failed = await runCli([
      '--replay',
      NIGHTS[2]!,
      '--out-dir',
      join(parent, 'failed'),
      '--format',
      'pdf',
      '--ca-file',
      certs.caFile,
      '--notify',
      `alertmanager+${am.url}`,
    ]);
    expect(failed.code).not.toBe(0);
    const firing = (await am.alerts()).filter((a) => a.labels.alertname === 'SvcSnapshotRunFailed');
    expect(firing.map((a) => a.labels.site)).toEqual([SITE]);
    expect(Date.parse(firing[0]!.endsAt)).toBeGreaterThan(Date.now());
    const good = await night(2, 'night-3-again');
    expect(good.code, good.stderr).toBe(0);
    const still = (await am.alerts()).filter(
      (a) => a.labels.alertname === 'SvcSnapshotRunFailed' && Date.parse(a.endsAt) > Date.now(),
    );
    // Alertmanager (Go) keeps the machine's clock under faketime, and takes an end it sees as ahead for no end.
    if (process.env.FAKETIME === undefined) expect(still).toEqual([]);
    else expect(still.map((a) => a.labels.site)).toEqual([SITE]);
  }, 120_000);

  it('notify <night 3> --previous <night 2> marks what is new, open and resolved since night 2', async () => {
    // Night 3 published alone in a directory of its own: no night before beside it, so its _findings.json has none.
    const alone = join(tmpDir('svc-night-alone-'), 'night-3');
    const made = await runCli(['--replay', NIGHTS[2]!, '--out-dir', alone, '--findings', '--quiet']);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(alone, '_findings.json'), 'utf8')).previous).toBeUndefined();
    const sent = hook.received.length;
    const res = await runCli(
      [
        'notify',
        alone,
        '--previous',
        join(parent, DATES[1]!),
        '--notify',
        `${hook.url}/in/hook`,
        '--ca-file',
        certs.caFile,
      ],
      {},
    );
    expect(res.code, res.stderr).toBe(0);
    expect(hook.received).toHaveLength(sent + 1);
    const digest = JSON.parse(hook.received.at(-1)!.body);
    expect(digest.findings.lifecycle).toBe(true);
    expect(digest.findings.counts.open).toBeGreaterThan(0);
    expect(digest.findings.counts.resolved).toBeGreaterThan(0);
    expect(digest.findings.resolved.items.length).toBe(digest.findings.counts.resolved);
    expect(digest.findings.shown.items.every((f: { state?: string }) => f.state === 'new')).toBe(true);
  }, 120_000);

  it('a typo in the waivers file costs a line, not the night: published, said, exit 2, findings alerts left alone', async () => {
    const typo = join(parent, 'typo.yaml');
    writeFileSync(
      typo,
      readFileSync(WAIVERS, 'utf8').replace(/rule: certification-missing/, 'rule: certification-misisng'),
    );
    const findingAlerts = async () =>
      (await am.alerts())
        .filter((a) => a.labels.alertname === 'SvcSnapshotFinding')
        .map((a) => `${a.labels.id} ${a.endsAt}`)
        .sort();
    const before = await findingAlerts();
    expect(before.length).toBeGreaterThan(0);
    const res = await night(2, 'night-3-typo', ['--waivers', typo]);
    expect(res.code).toBe(2);
    expect(existsSync(join(parent, 'night-3-typo', '_snapshot-manifest.json'))).toBe(true);
    expect(res.stderr).toMatch(
      /error: --waivers \S*typo\.yaml, line \d+: rule "certification-misisng" is not a findings rule \(did you mean certification-missing\?\)/,
    );
    expect(JSON.parse(res.stdout).problems).toHaveLength(1);
    const digest = JSON.parse(hook.received.at(-1)!.body);
    expect(digest.outDir).toBe(join(parent, 'night-3-typo'));
    expect(digest.problems[0]).toContain('did you mean certification-missing?');
    expect(await findingAlerts()).toEqual(before);
  }, 120_000);

  it('a notification target that cannot be used costs a line: the others get the digest saying so, exit 2', async () => {
    const sent = hook.received.length;
    const res = await night(2, 'night-3-bad-target', ['--notify', 'gopher://127.0.0.1/secret-path-xyz']);
    expect(res.code).toBe(2);
    expect(existsSync(join(parent, 'night-3-bad-target', '_snapshot-manifest.json'))).toBe(true);
    expect(res.stderr).toMatch(/error: .*--notify.*the run goes on without it, exit 2 at the end/);
    expect(res.stderr).not.toContain('secret-path-xyz');
    expect(hook.received).toHaveLength(sent + 1);
    const digest = JSON.parse(hook.received.at(-1)!.body);
    expect(digest.problems.join('\n')).toMatch(/--notify/);
    expect(hook.received.at(-1)!.body).not.toContain('secret-path-xyz');
  }, 120_000);
});
