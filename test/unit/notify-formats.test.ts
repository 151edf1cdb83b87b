/**
 * The digest's payloads with hostile names from the
 * site: each format escapes them its own way, every payload stays within the
 * limits its service documents, lists are cut whole with "and N more", and
 * no name is cut inside a word.
 */
import { describe, expect, it } from 'vitest';
import { buildDigest, worthSending } from '../../src/notify/digest.js';
import type { FindingIn } from '../../src/findings/file.js';
import { alertsOf, emailContent, slackPayload, teamsPayload, webhookPayload } from '../../src/notify/formats.js';
import { testDigest } from '../../src/notify/index.js';
import { clip } from '../../src/notify/text.js';
import { HOSTILE_NAMES } from '../helpers/hostile-names.js';
import { runNotice } from '../helpers/run-notice.js';

const CHAT_HOSTILE = [
  '<!channel> wake up',
  '@here look',
  '<@U123> and <#C999|general>',
  '[click](https://evil.example/phish) ![img](https://evil.example/x.png)',
  '<https://evil.example|innocent>',
  'javascript:alert(1)',
  '[x](javascript:alert(1)) *bold* _it_ `code` ~gone~ # heading',
  'line\r\nBcc: victim@example.org',
  ...HOSTILE_NAMES,
];

function finding(i: number, name: string, severity: FindingIn['severity'] = 'high'): FindingIn {
  return {
    rule: 'certification-expired',
    severity,
    subject: { export: 'project_memberships', key: [`p${i}`, `u${i}`] },
    detail: `user ${name} holds an expired certification`,
    display: { user: name, project: `Project ${i}` },
  };
}

const hostile = buildDigest(runNotice(CHAT_HOSTILE.map((n, i) => finding(i, n))));

/** Every string value of a JSON document. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

describe('Slack', () => {
  const p = slackPayload(hostile);
  const texts = strings(p.blocks);
  it('puts site text in plain_text only, with no mention, channel or link syntax left', () => {
    for (const b of p.blocks as Array<{ type: string; text: { type: string } }>) expect(b.text.type).toBe('plain_text');
    const all = texts.join('\n');
    expect(all).not.toMatch(/<[!@#]/);
    expect(all).not.toMatch(/@(here|channel|everyone)\b/);
    expect(all).toContain('<\u2060!channel>');
    expect(p.text).not.toMatch(/[<>]/);
    expect(p.text).not.toMatch(/[*_~`][^\u2060]/);
  });
  it('stays within Block Kit limits: 50 blocks, 3000 per section, 150 for the header', () => {
    expect(p.blocks.length).toBeLessThanOrEqual(50);
    const [header, ...sections] = p.blocks as Array<{ text: { text: string } }>;
    expect(header!.text.text.length).toBeLessThanOrEqual(150);
    for (const s of sections) expect(s.text.text.length).toBeLessThanOrEqual(3000);
  });
  it('keeps each section within 3000 characters and the whole within 2,500, word joiners counted, cut between lines', () => {
    const mentions = '@here '.repeat(60);
    const d = buildDigest(
      runNotice(
        Array.from({ length: 40 }, (_, i) => finding(i, mentions)),
        { site: `https://platform.example.org/${'@here'.repeat(40)}`, outDir: `/var/lib/${'@channel'.repeat(20)}` },
      ),
    );
    const [header, ...sections] = slackPayload(d).blocks as Array<{ text: { text: string } }>;
    expect(header!.text.text.length).toBeLessThanOrEqual(150);
    expect(header!.text.text).not.toMatch(/@(here|channel|everyone)\b/);
    expect(sections.length).toBeGreaterThan(1);
    expect(sections.map((s) => s.text.text).join('\n').length).toBeLessThanOrEqual(2500);
    for (const s of sections) {
      expect(s.text.text.length).toBeLessThanOrEqual(3000);
      expect(s.text.text).not.toMatch(/@(here|channel|everyone)\b/);
      // Whole lines only: each starts as a heading or one of the digest's lines does.
      for (const line of s.text.text.split('\n'))
        expect(line).toMatch(
          /^(https:|\d+ new, |Findings \(|@\u2060here.*:$| {2}- \[high\] |and \d+ more$|Snapshot: |Report: )/,
        );
    }
  });
  it('never writes a control or right-to-left override character', () => {
    // Line feeds are the digest's own, between lines; none comes from the data.
    expect(texts.join('')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202a-\u202e\u2066-\u2069]/);
    expect(texts.join('')).not.toContain('\r\nBcc');
    expect(texts.join('')).toContain('\\u202e');
  });
});

describe('Teams', () => {
  const card = teamsPayload(hostile) as {
    type: string;
    attachments: Array<{ contentType: string; content: { type: string; version: string; body: unknown[] } }>;
  };
  it('is a workflow message holding one Adaptive Card of RichTextBlocks (TextRun shows no markdown)', () => {
    expect(card.type).toBe('message');
    expect(card.attachments).toHaveLength(1);
    expect(card.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const content = card.attachments[0]!.content;
    expect(content.type).toBe('AdaptiveCard');
    for (const b of content.body as Array<{ type: string; inlines: Array<{ type: string }> }>) {
      expect(b.type).toBe('RichTextBlock');
      for (const i of b.inlines) expect(i.type).toBe('TextRun');
    }
  });
  it('turns no name into a link, an image, emphasis or code, should the text be read as Markdown', () => {
    const all = strings(card.attachments[0]!.content.body).join('\n');
    expect(all).toContain('javascript:alert(\u2060');
    expect(all).not.toMatch(/\]\(|!\[|<[a-z!@#]/i);
    expect(all).not.toMatch(/[[\]()<>*_~`#!|][^\u2060]/);
  });

  it('stays under the 28 KB a Teams message may take, with "and N more"', () => {
    const many = buildDigest(
      runNotice(Array.from({ length: 2000 }, (_, i) => finding(i, `User ${i} ${'x'.repeat(200)}`))),
    );
    const json = JSON.stringify(teamsPayload(many));
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(28 * 1024);
    expect(json).toMatch(/and \d+ more/);
  });
});

describe('e-mail', () => {
  const mail = emailContent(hostile);
  it('has a one-line subject: no CR or LF can add a header', () => {
    expect(mail.subject).not.toMatch(/[\r\n]/);
    const crlf = emailContent(buildDigest(runNotice([], { site: 'https://x.example\r\nBcc: victim@example.org' })));
    expect(crlf.subject).not.toMatch(/[\r\n]/);
    expect(crlf.subject).toContain('\\u000d\\u000aBcc');
  });
  it('shows every name as text in the HTML part: no tag, attribute or link from the data', () => {
    expect(mail.html).not.toMatch(/<(img|script|svg|iframe|a)\b/i);
    expect(mail.html).not.toContain('onerror=alert(1)>');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.text).toContain('<img src=x onerror=alert(1)>');
  });
});

describe('notify --test', () => {
  const d = testDigest('host-1.example.org', new Date('2026-11-22T02:00:00.000Z'));
  const title = 'Test message from svc-snapshot on host-1.example.org: notifications reach this target';
  it('sends the webhook "test": true and a title only, no digest of a run that did not happen', () => {
    expect(webhookPayload(d)).toEqual({ version: 1, test: true, title });
  });
  it('sends every other sink its title alone', () => {
    expect(slackPayload(d).blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: title, emoji: false } },
    ]);
    const card = teamsPayload(d) as { attachments: Array<{ content: { body: unknown[] } }> };
    expect(card.attachments[0]!.content.body).toHaveLength(1);
    expect(emailContent(d)).toMatchObject({ subject: title, text: `${title}\n\n` });
  });
});

describe('the lists', () => {
  it('cut a 50,000-character name short, at a word end or with …', () => {
    const p = JSON.stringify(slackPayload(hostile));
    expect(p).not.toContain('x'.repeat(1000));
    expect(clip('alpha beta gamma delta', 13)).toBe('alpha beta…');
    expect(clip('😀😀😀😀', 4)).toBe('😀…');
  });
  it('show the most severe first, then "and N more"', () => {
    const list = [
      ...Array.from({ length: 30 }, (_, i) => finding(i, `Low ${i}`, 'low')),
      finding(99, 'Critical one', 'critical'),
    ];
    const d = buildDigest(runNotice(list));
    const text = emailContent(d).text;
    expect(d.findings.top(1)[0]!.severity).toBe('critical');
    const slack = strings(slackPayload(d).blocks).join('\n');
    expect(slack.indexOf('Critical one')).toBeLessThan(slack.indexOf('Low 0'));
    expect(slack).toContain('and 11 more');
    expect(text).toContain('Critical one');
  });
  it('26,000 findings make payloads within every limit', () => {
    const d = buildDigest(runNotice(Array.from({ length: 26_000 }, (_, i) => finding(i, `User ${i}`))));
    expect(JSON.stringify(slackPayload(d).blocks).length).toBeLessThanOrEqual(12_000);
    const hook = webhookPayload(d) as { findings: { shown: { items: unknown[]; more: number } } };
    expect(hook.findings.shown.items).toHaveLength(1000);
    expect(hook.findings.shown.more).toBe(25_000);
    const mail = emailContent(d);
    expect(mail.text.length + mail.html.length).toBeLessThanOrEqual(200_000);
  });
});

describe('the lifecycle, when the report has it', () => {
  const lifecycle: FindingIn[] = [
    { ...finding(1, 'Ann New'), id: 'id-new', state: 'new' },
    { ...finding(2, 'Bob Open'), id: 'id-open', state: 'open', firstSeen: '2026-11-01T02:00:00.000Z' },
    {
      ...finding(3, 'Cy Waived'),
      id: 'id-waived',
      state: 'open',
      waived: { reason: 'r', owner: 'o', expires: '2027-01-01' },
    },
  ];
  const d = buildDigest({
    ...runNotice(lifecycle),
    findings: {
      time: '2026-11-22T02:00:00.000Z',
      rules: [],
      findings: lifecycle,
      resolved: [{ ...finding(4, 'Di Gone'), id: 'id-gone' }],
      waivers: {
        endingSoon: [{ rule: 'quota-exceeded', subject: ['team-7'], owner: 'ops@example.org', expires: '2026-12-01' }],
      },
    },
  });
  it('lists the new findings and the resolved ones, by their display names', () => {
    expect(d.lifecycle).toBe(true);
    expect(d.findings.top(10).map((f) => f.id)).toEqual(['id-new']);
    expect(d.resolved.top(10).map((f) => f.name)).toEqual(['Di Gone · Project 4']);
    const text = emailContent(d).text;
    expect(text).toMatch(
      /New findings \(1\)\n {2}Ann New:\n {4}- \[high\] Certification expired \(Project 1\): user Ann New holds/,
    );
    expect(text).toContain('Resolved (1)\n  Di Gone: Certification expired (Project 4)\n');
    expect(text).toContain('Waivers (1)\n  ending soon: Quota exceeded (ops@example.org, until 2026-12-01)\n');
  });
  it('lists as ended only the waivers that ended since the night before', () => {
    const ended = (expires: string) => ({ rule: 'quota-exceeded', subject: ['team-7'], owner: 'o', expires });
    const night = (previous?: string) =>
      buildDigest({
        ...runNotice([]),
        findings: {
          time: '2026-11-23T02:00:00.000Z',
          ...(previous !== undefined ? { previous: { time: previous } } : {}),
          rules: [],
          findings: [],
          waivers: { ended: [ended('2026-11-22'), ended('2026-11-20')] },
        },
      }).waivers.map((w) => w.waiver.expires);
    // In force until the end of 2026-11-22 (UTC), so at the night before's 02:00: news tonight. 2026-11-20 was not.
    expect(night('2026-11-22T02:00:00.000Z')).toEqual(['2026-11-22']);
    expect(night()).toEqual(['2026-11-22', '2026-11-20']);
  });
  it('sends on new or resolved findings; a night with nothing new sends nothing', () => {
    expect(worthSending(d, ['findings'])).toBe(true);
    const quiet = buildDigest({
      ...runNotice([lifecycle[1]!]),
      findings: { time: 't', rules: [], findings: [lifecycle[1]!], resolved: [] },
    });
    expect(worthSending(quiet, ['failure', 'changes', 'findings'])).toBe(false);
    expect(worthSending(buildDigest({ ...runNotice([]), exitCode: 1, outDir: undefined }), ['changes'])).toBe(true);
  });
  it('Alertmanager: active findings fire until the next run is due, waived and resolved ones end now', () => {
    const now = new Date('2026-11-22T02:05:00.000Z');
    const alerts = [...alertsOf(d, { severity: 'high', intervalHours: 26, now })];
    const byId = new Map(alerts.map((a) => [a.labels.id, a]));
    expect(byId.get('id-open')!.startsAt).toBe('2026-11-01T02:00:00.000Z');
    expect(byId.get('id-open')!.endsAt).toBe('2026-11-23T04:05:00.000Z');
    expect(byId.get('id-open')!.labels).toMatchObject({
      alertname: 'SvcSnapshotFinding',
      rule: 'certification-expired',
      severity: 'high',
      site: 'https://platform.example.org',
    });
    expect(byId.get('id-waived')!.endsAt).toBe(now.toISOString());
    expect(byId.get('id-gone')!.endsAt).toBe(now.toISOString());
    const run = alerts.find((a) => a.labels.alertname === 'SvcSnapshotRunFailed')!;
    expect(run.endsAt).toBe(now.toISOString());
    expect([...alertsOf(d, { severity: 'critical', intervalHours: 26, now })]).toHaveLength(1);
  });
  it('a rule not evaluated tonight: its findings carried from the night before keep firing (waived ones ended), and are not news', () => {
    const carried = [
      { ...finding(5, 'Cy Carried'), id: 'id-carried', firstSeen: '2026-11-10T02:00:00.000Z' },
      {
        ...finding(6, 'Wa Waived'),
        id: 'id-carried-waived',
        waived: { reason: 'r', owner: 'o', expires: '2027-01-01' },
      },
    ];
    const partial = buildDigest({
      ...runNotice([lifecycle[1]!]),
      findings: { time: 't', rules: [], findings: [lifecycle[1]!], resolved: [], carried },
    });
    const now = new Date('2026-11-22T02:05:00.000Z');
    const byId = new Map(
      [...alertsOf(partial, { severity: 'high', intervalHours: 26, now })].map((a) => [a.labels.id, a]),
    );
    expect(byId.get('id-carried')!.startsAt).toBe('2026-11-10T02:00:00.000Z');
    expect(byId.get('id-carried')!.endsAt).toBe('2026-11-23T04:05:00.000Z');
    // Waived by tonight's waivers: its alert is ended, as a waived finding's is, and it counts as waived.
    expect(byId.get('id-carried-waived')!.endsAt).toBe(now.toISOString());
    expect(partial.waived.all.map((f) => f.id)).toEqual(['id-carried-waived']);
    expect(partial.active.all.map((f) => f.id)).toEqual([lifecycle[1]!.id, 'id-carried']);
    expect(partial.findings.length).toBe(0);
    // Carried findings are in none of the night's counts: only tonight's, the open one.
    expect(partial.counts).toEqual({ new: 0, open: 1, resolved: 0, waived: 0, active: 1 });
    expect(worthSending(partial, ['findings'])).toBe(false);
  });
  it('a failed run is one alert of its own, firing', () => {
    const failed = buildDigest({ ...runNotice([]), exitCode: 3, outDir: undefined, failure: 'token rejected' });
    const alerts = [
      ...alertsOf(failed, { severity: 'high', intervalHours: 26, now: new Date('2026-11-22T00:00:00Z') }),
    ];
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.labels.alertname).toBe('SvcSnapshotRunFailed');
    expect(alerts[0]!.endsAt).toBe('2026-11-23T02:00:00.000Z');
  });
});
