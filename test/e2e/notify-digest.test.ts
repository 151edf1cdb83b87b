/**
 * The digest a person reads, on the third night of the shipped recordings
 * with recordings/waivers.yaml, sent by the nightly snapshot itself to real
 * receivers on 127.0.0.1 (HTTPS receivers shaped as Slack and Teams, the
 * SMTP server with STARTTLS): each text form opens with the verdict, then
 * the night's counts; it names people, never a UUID or a key list; it ends
 * with the link under --report-url; and it is at most 2,500 characters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTestCerts } from '../fake/certs.js';
import { startPingReceiver, type PingReceiver } from '../helpers/ping-receiver.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/notify-receivers.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { nightCounts } from '../../src/findings/counts.js';

const NIGHTS = ['platform-3.14.1', 'platform-3.14.1-night2', 'platform-3.14.1-night3'].map((n) =>
  join(REPO_ROOT, 'recordings', n),
);
const WAIVERS = join(REPO_ROOT, 'recordings', 'waivers.yaml');
const REPORT_URL = 'https://reports.example.org/svc';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const certs = getTestCerts();
const available = existsSync('/usr/lib/python3/dist-packages/aiosmtpd');

let slack: PingReceiver;
let teams: PingReceiver;
let smtp: SmtpReceiver;
let parent: string;
let run: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  if (!available) return;
  [slack, teams, smtp] = await Promise.all([
    startPingReceiver(undefined, certs),
    startPingReceiver(undefined, certs),
    startSmtpReceiver(certs),
  ]);
  parent = tmpDir('svc-digest-');
  for (const night of NIGHTS.slice(0, 2)) {
    const res = await runCli(['--replay', night, '--findings', '--waivers', WAIVERS, '--quiet'], { cwd: parent });
    expect(res.code, res.stderr).toBe(0);
  }
  run = await runCli(
    [
      '--replay',
      NIGHTS[2]!,
      '--findings',
      '--waivers',
      WAIVERS,
      '--ca-file',
      certs.caFile,
      '--notify',
      `slack+${slack.url}/services/T0/B0/slack-key`,
      '--notify',
      `teams+${teams.url}/workflows/teams-key`,
      '--notify',
      `smtp://127.0.0.1:${smtp.port}?from=svc@example.org&to=admins@example.org`,
      '--quiet',
      '--json',
    ],
    { cwd: parent, env: { SVC_REPORT_URL: REPORT_URL } },
  );
}, 180_000);
afterAll(async () => {
  await Promise.all([slack, teams, smtp].map((r) => r?.close()));
});

/** The texts a person reads of each sink. */
function texts(): Record<'slack' | 'teams' | 'email', string> {
  const s = JSON.parse(slack.received[0]!.body) as { blocks: Array<{ text: { text: string } }> };
  const t = JSON.parse(teams.received[0]!.body) as {
    attachments: Array<{ content: { body: Array<{ inlines: Array<{ text: string }> }> } }>;
  };
  const mail = smtp.received()[0]!;
  return {
    slack: s.blocks.map((b) => b.text.text).join('\n'),
    // Without the invisible word joiners that keep Markdown from acting.
    teams: t.attachments[0]!.content.body.map((b) => b.inlines.map((i) => i.text).join('')).join('\n'),
    email: mail.parts.find((p) => p.type === 'text/plain')!.content.replace(/\r\n/g, '\n'),
  };
}

describe.skipIf(!available)("the third night's digest", () => {
  it('is sent to every target, each outcome in the --json summary', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const summary = JSON.parse(run.stdout) as { notify: Array<{ target: string; ok: boolean }> };
    expect(summary.notify.map((n) => [n.target, n.ok])).toEqual([
      ['slack #1', true],
      ['teams #2', true],
      ['email #3', true],
    ]);
  });

  it('opens with the verdict, then the counts of the night; at most 2,500 characters in each text form', () => {
    const report = JSON.parse(readFileSync(join(parent, 'svc-snapshot-2026-11-23', '_findings.json'), 'utf8'));
    const c = nightCounts(report);
    const counts = `${c.new} new, ${c.open} open, ${c.resolved} resolved, ${c.waived} waived, ${c.active} active`;
    expect(c.waived).toBe(2);
    for (const [sink, text] of Object.entries(texts())) {
      const lines = text.replace(/\u2060/g, '').split('\n');
      expect(lines.slice(0, 2), sink).toEqual(['https://platform.example.org 2026-11-23: OK', counts]);
      expect(text.length, sink).toBeLessThanOrEqual(2500);
    }
    expect(smtp.received()[0]!.subject).toBe('https://platform.example.org 2026-11-23: OK');
  });

  it('names people and what is wrong, never a UUID, a key list or a staging directory', () => {
    for (const [sink, raw] of Object.entries(texts())) {
      const text = raw.replace(/\u2060/g, '');
      expect(text, sink).not.toMatch(UUID);
      expect(text, sink).not.toMatch(/proj\||team\||sreq\||slvl\||\.partial-|\.svc-snapshot-/);
      expect(text, sink).toMatch(/^ *Bo Nakamura:$/m);
      expect(text, sink).toMatch(/User expired with access: account expired 2026-11-22T02:00:00Z/);
      expect(text, sink).toMatch(/^ *ending soon: Certification missing, Priya Tanaka: NDA and course booked/m);
      expect(text, sink).toMatch(/^ *ended: Quota exceeded, Team 2 Imaging: extra cores granted .*platform-team@/m);
      expect(text, sink).toMatch(/^ *stale: Certification missing, Femi Weiß: NDA being signed/m);
      expect(text, sink).toMatch(/^ *users \+3$/m);
    }
  });

  it('ends with the link under --report-url, never cut', () => {
    for (const [sink, text] of Object.entries(texts()))
      expect(text.trimEnd().split('\n').at(-1), sink).toBe(`Snapshot: ${REPORT_URL}/svc-snapshot-2026-11-23/`);
  });
});

describe('--report-url', () => {
  it('that is not an http(s) URL costs a line, not the night: published, said before the run, exit 2', async () => {
    const cwd = tmpDir('svc-report-url-');
    const flag = await runCli(['--replay', NIGHTS[0]!, '--report-url', 'reports/svc', '--out-dir', 'out'], { cwd });
    expect(flag.code).toBe(2);
    expect(flag.stderr.split('\n')[0]).toBe(
      'svc-snapshot: error: --report-url is not a URL; give where the snapshot directories are served, as ' +
        'https://host/path; the run goes on without it, exit 2 at the end',
    );
    expect(existsSync(join(cwd, 'out', '_snapshot-manifest.json'))).toBe(true);
    const env = await runCli(['--replay', NIGHTS[0]!, '--out-dir', 'out2'], {
      cwd,
      env: { SVC_REPORT_URL: 'ftp://reports.example.org' },
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/^svc-snapshot: error: SVC_REPORT_URL must be an https:\/\/ \(or http:\/\/\) URL/);
    expect(existsSync(join(cwd, 'out2', '_snapshot-manifest.json'))).toBe(true);
  });
});
