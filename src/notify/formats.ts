/**
 * Each sink's payload, built from the digest's capped lines (text.ts) and
 * measured against the sink's documented limits: when a rendering is over,
 * the lists are shortened (their "and N more" grows) and it is rendered
 * again, so that a payload is never cut in the middle, and so never broken.
 */
import { normaliseSite } from '../config/url.js';
import { SEVERITIES, type Severity } from '../config/values.js';
import { idOf, ruleCleaner, type Digest, type DigestFinding, type FindingList } from './digest.js';
import type { FindingIn } from '../findings/file.js';
import { clean, clip, digestDoc, moreLine, plainText, type DigestDoc, type DocLimits } from './text.js';

/**
 * What a person reads of one text sink, at most: a digest read on a phone.
 * The whole of the night is in the report it links; a list that does not
 * fit ends with "and N more".
 */
const TEXT_MAX = 2_500;

/**
 * Renders with `limits`, shortening the lists until the result `fits` (its
 * sink's own limits, and at most TEXT_MAX characters of text a person
 * reads). The verdict, the lines after it and the link are never cut.
 */
function fitted<T>(d: Digest, limits: DocLimits, render: (doc: DigestDoc) => T, fits: (t: T) => boolean) {
  let l = limits;
  for (;;) {
    const out = render(digestDoc(d, l));
    if (fits(out) || (l.findings === 0 && l.resolved === 0 && l.others === 0)) return out;
    l = shorter(l);
  }
}

/**
 * The next limits to try: a fifth less (at least one) of the new findings
 * first, down to 5, then of the resolved ones, down to 3, then of the rest
 * (waivers, failed routes), down to 2, then of all: the short lists a
 * person acts on (waivers ending) are the last to be cut.
 */
function shorter(l: DocLimits): DocLimits {
  const less = (n: number) => Math.max(0, Math.min(n - 1, Math.floor(n * 0.8)));
  if (l.findings > 5) return { ...l, findings: less(l.findings) };
  if (l.resolved > 3) return { ...l, resolved: less(l.resolved) };
  if (l.others > 2) return { ...l, others: less(l.others) };
  return { ...l, findings: less(l.findings), resolved: less(l.resolved), others: less(l.others) };
}

/** The characters of every string of a payload, one line each: what its reader is shown, and then some. */
function textLength(v: unknown): number {
  if (typeof v === 'string') return v.length + 1;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + textLength(x), 0);
  if (v !== null && typeof v === 'object') return Object.values(v).reduce((n: number, x) => n + textLength(x), 0);
  return 0;
}

/**
 * Slack turns `<!channel>`, `<@U123>` and `<#C1>` into mentions and links, and
 * some clients `@here` too: a word joiner (U+2060, invisible) after the `<` or
 * `@` leaves the text as it reads and unparsed. Site text goes into
 * plain_text objects, which render no mrkdwn links or formatting.
 */
function slackSafe(text: string): string {
  return text.replace(/<(?=[!@#])/g, '<\u2060').replace(/@(?=(here|channel|everyone)\b)/gi, '@\u2060');
}

/**
 * The notification's fallback text is mrkdwn: Slack's escaping of the three
 * characters it gives meaning to, and a word joiner after each character
 * that could open bold, italic, strike or code (`*x*`, `_x_`, `~x~`, `` `x` ``).
 */
function slackEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[*_~`]/g, '$&\u2060');
}

/** Block Kit: a section's text is at most 3000 characters, a header's 150, a message 50 blocks. */
const SLACK_SECTION = 3000;
const SLACK_HEADER = 150;
const SLACK_MESSAGE_CHARS = 12_000;

/**
 * `text` made Slack-safe, and at most `max` characters once safe: a text too
 * long is clipped (at a word's end) short enough for the word joiners its
 * first `max` characters take, and for one more that the cut could add
 * ("@here…"). A joiner needs two characters or more, so the cut is at least
 * half of `max`.
 */
function slackText(text: string, max: number): string {
  let cut = max;
  for (;;) {
    const safe = slackSafe(cut < text.length ? clip(text, cut) : text);
    if (safe.length <= max || cut <= 1) return safe;
    cut -= Math.max(1, safe.length - max);
  }
}

/**
 * The sections' texts, already Slack-safe: whole lines packed up to the
 * section limit, measured with their word joiners (a line's joiners are the
 * same alone as within the section, as none looks past a line's end).
 */
function slackSections(doc: DigestDoc): string[] {
  const texts: string[] = [];
  if (doc.lead.length > 0) texts.push(doc.lead.map((l) => slackText(l, SLACK_SECTION)).join('\n'));
  for (const s of doc.sections) {
    let current = slackText(s.heading, SLACK_SECTION);
    const lines = s.more > 0 ? [...s.lines, moreLine(s.more)] : s.lines;
    for (const raw of lines) {
      const line = slackText(raw, SLACK_SECTION);
      if (current.length + 1 + line.length > SLACK_SECTION) {
        texts.push(current);
        current = line;
      } else current += `\n${line}`;
    }
    texts.push(current);
  }
  if (doc.link.length > 0) texts.push(doc.link.map((l) => slackText(l, SLACK_SECTION)).join('\n'));
  return texts;
}

/** The first `n - 1` and the last of `items`: the link is never cut. */
function keepLast<T>(items: readonly T[], n: number): T[] {
  return items.length <= n ? [...items] : [...items.slice(0, n - 1), items[items.length - 1]!];
}

export function slackPayload(d: Digest): { text: string; blocks: unknown[] } {
  const limits = { findings: 20, resolved: 10, others: 5, line: 280 };
  const render = (doc: DigestDoc) => ({
    text: slackEscape(clip(doc.title, 300)),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: slackText(doc.title, SLACK_HEADER), emoji: false } },
      ...keepLast(slackSections(doc), 48).map((text) => ({
        type: 'section',
        text: { type: 'plain_text', text, emoji: false },
      })),
    ],
  });
  const fits = (p: { text: string; blocks: unknown[] }) =>
    JSON.stringify(p.blocks).length <= SLACK_MESSAGE_CHARS &&
    textLength(p.blocks.map((b) => (b as { text: { text: string } }).text.text)) <= TEXT_MAX;
  return fitted(d, limits, render, fits);
}

/** Teams takes a message of at most 28 KB; a card kept under 24 KB leaves room for the envelope. */
const TEAMS_MAX_BYTES = 24_000;

/**
 * Text for a Teams card. A TextRun shows its text as it is, but a client, or
 * a flow that copies the text into a TextBlock or a chat message, may read
 * it as Markdown: a word joiner (U+2060, invisible) after every character
 * that opens a link, an image, emphasis, code, a heading or HTML
 * (`[x](javascript:…)` reads `[x]⁠(javascript:…)`, which no Markdown links).
 */
function teamsSafe(text: string): string {
  return text.replace(/[[\]()<>*_~`#!|\\]/g, '$&\u2060');
}

/** A RichTextBlock of one TextRun of text made safe (teamsSafe): no markdown, no link or image from the data. */
function richText(text: string, bold = false): unknown {
  return {
    type: 'RichTextBlock',
    inlines: [{ type: 'TextRun', text, ...(bold ? { weight: 'Bolder' } : {}) }],
  };
}

/** The card, and the texts of its TextRuns (what a reader is shown). */
function teamsCard(doc: DigestDoc): { card: unknown; texts: string[] } {
  const texts: string[] = [clip(doc.title, 300)];
  const bold = new Set([0]);
  texts.push(...doc.lead);
  for (const s of doc.sections) {
    bold.add(texts.length);
    texts.push(s.heading, ...s.lines);
    if (s.more > 0) texts.push(moreLine(s.more));
  }
  texts.push(...doc.link);
  const safe = texts.map(teamsSafe);
  const body = safe.map((t, i) => richText(t, bold.has(i)));
  return {
    texts: safe,
    card: {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body,
          },
        },
      ],
    },
  };
}

export function teamsPayload(d: Digest): unknown {
  const limits = { findings: 25, resolved: 10, others: 5, line: 300 };
  const fits = (c: ReturnType<typeof teamsCard>) =>
    Buffer.byteLength(JSON.stringify(c)) <= TEAMS_MAX_BYTES && textLength(c.texts) <= TEXT_MAX;
  return fitted(d, limits, teamsCard, fits).card;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The e-mail's HTML part: every line escaped text, no link, image or style from the data. */
function html(doc: DigestDoc): string {
  const parts = [`<h2>${escapeHtml(doc.title)}</h2>`, ...doc.lead.map((l) => `<p>${escapeHtml(l)}</p>`)];
  for (const s of doc.sections) {
    const items = s.lines.map((l) => `<li>${escapeHtml(l)}</li>`);
    if (s.more > 0) items.push(`<li><em>${escapeHtml(moreLine(s.more))}</em></li>`);
    parts.push(`<h3>${escapeHtml(s.heading)}</h3>`, `<ul>${items.join('')}</ul>`);
  }
  // The link is text, not an anchor: it comes from the command line, and a reader's mail client links it.
  parts.push(...doc.link.map((l) => `<p>${escapeHtml(l)}</p>`));
  return `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${parts.join('\n')}</body></html>\n`;
}

export interface EmailContent {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** A sensible e-mail: at most about 200 KB of text, the subject one line. */
const EMAIL_MAX_CHARS = 200_000;

export function emailContent(d: Digest): EmailContent {
  const limits = { findings: 20, resolved: 10, others: 5, line: 300 };
  const render = (doc: DigestDoc) => ({ subject: clip(doc.title, 200), text: plainText(doc), html: html(doc) });
  // Measured by its text part, which the HTML part repeats.
  const fits = (e: EmailContent) => e.text.length + e.html.length <= EMAIL_MAX_CHARS && e.text.length <= TEXT_MAX;
  return fitted(d, limits, render, fits);
}

/** The generic webhook: the digest itself as JSON, its values cleaned and its lists capped at 1000 each. */
const WEBHOOK_LIST = 1000;

function webhookFinding(f: DigestFinding) {
  return {
    id: clip(f.id, 200),
    rule: f.rule,
    severity: f.severity,
    name: clip(f.name, 1000),
    detail: clip(f.detail, 2000),
    ...(f.state !== undefined ? { state: f.state } : {}),
    ...(f.firstSeen !== undefined ? { firstSeen: f.firstSeen } : {}),
  };
}

function capped<T, U>(items: readonly T[], map: (x: T) => U) {
  return { items: items.slice(0, WEBHOOK_LIST).map(map), more: Math.max(0, items.length - WEBHOOK_LIST) };
}

function cappedFindings(list: FindingList) {
  return { items: list.top(WEBHOOK_LIST).map(webhookFinding), more: Math.max(0, list.length - WEBHOOK_LIST) };
}

/** The digest as the webhook's JSON; `notify --test`'s is its title alone (docs/notify.md). */
export function webhookPayload(d: Digest): unknown {
  if (d.test) return { version: 1, test: true, title: titleLine(d) };
  return {
    version: 1,
    title: titleLine(d),
    command: d.command,
    site: clean(d.site),
    time: d.time,
    outcome: {
      exitCode: d.outcome.exitCode,
      state: d.outcome.state,
      ...(d.outcome.failure !== undefined ? { failure: clip(clean(d.outcome.failure), 4000) } : {}),
      failedRoutes: capped(d.outcome.failedRoutes, (r) => ({
        route: clean(r.route),
        error: clip(clean(r.error), 1000),
      })),
    },
    ...(d.outDir !== undefined ? { outDir: clean(d.outDir) } : {}),
    ...(d.reportFile !== undefined ? { reportFile: clean(d.reportFile) } : {}),
    ...(d.previousDir !== undefined ? { previousDir: clean(d.previousDir) } : {}),
    ...(d.link !== undefined ? { link: d.link } : {}),
    ...(d.rerun !== undefined ? { rerun: { of: clean(d.rerun.of), newer: clean(d.rerun.newer) } } : {}),
    problems: d.problems.map((p) => clip(clean(p), 1000)),
    hasChanges: d.hasChanges,
    exports: d.exports,
    findings: {
      ...(d.counts !== undefined ? { counts: d.counts } : {}),
      evaluated: d.findingsEvaluated,
      lifecycle: d.lifecycle,
      active: d.active.length,
      waived: d.waived.length,
      shown: cappedFindings(d.findings),
      resolved: cappedFindings(d.resolved),
      waiversEndingSoon: capped(d.waiversEndingSoon, (w) => ({
        rule: clean(w.rule),
        ...(w.id !== undefined ? { id: clip(clean(w.id), 200) } : {}),
        ...(w.subject !== undefined ? { subject: w.subject.map((k) => clip(clean(k), 200)) } : {}),
        ...(w.reason !== undefined ? { reason: clip(clean(w.reason), 1000) } : {}),
        owner: clip(clean(w.owner), 200),
        expires: clean(w.expires),
      })),
      notEvaluated: d.notEvaluated.map((r) => ({ rule: clean(r.rule), reason: clip(clean(r.reason), 1000) })),
    },
  };
}

function titleLine(d: Digest): string {
  return digestDoc(d, { findings: 0, resolved: 0, others: 0, line: 100 }).title;
}

/** Alertmanager's postableAlert (api/v2/openapi.yaml). */
export interface PostableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
}

export interface AlertSettings {
  readonly severity: Severity;
  readonly intervalHours: number;
  readonly now: Date;
}

function atLeast(s: Severity, min: Severity): boolean {
  return SEVERITIES.indexOf(s) <= SEVERITIES.indexOf(min);
}

/**
 * The alerts of one run: each active finding at or above the severity, firing
 * until the next run is due; waived and resolved ones ended now (an alert that
 * was not firing is ended harmlessly); and the run's own alert, firing when
 * it failed, ended when it did not. Made one at a time from the report's
 * findings, as they are sent, in the report's order.
 */
export function* alertsOf(d: Digest, s: AlertSettings): Generator<PostableAlert> {
  const now = s.now.toISOString();
  const until = new Date(s.now.getTime() + s.intervalHours * 3600_000).toISOString();
  // The site as a site is keyed: a failed run's alert (labelled from the configuration) is ended by the next good run's.
  const site = clip(clean(normaliseSite(d.site)), 1000);
  const failed = d.outcome.state === 'failed';
  yield {
    labels: { alertname: 'SvcSnapshotRunFailed', command: d.command, severity: 'critical', site },
    annotations: {
      summary: clip(titleLine(d), 1000),
      description: clip(clean(d.outcome.failure ?? `exit code ${d.outcome.exitCode}`), 2000),
    },
    startsAt: now,
    endsAt: failed ? until : now,
  };
  // Findings told without the configured waivers would fire what they waive: their alerts are left as they were.
  if (failed || d.problems.length > 0) return;
  const lists: Array<[FindingList, string]> = [
    [d.active, until],
    [d.waived, now],
    [d.resolved, now],
  ];
  const rule = ruleCleaner();
  for (const [list, endsAt] of lists) {
    const names = list.names();
    for (let i = 0; i < list.all.length; i++) {
      const f = list.all[i]!;
      if (atLeast(f.severity, s.severity)) yield findingAlert(f, rule(f.rule), names[i]!, site, d.time, endsAt);
    }
  }
}

/**
 * A finding's alert: the labels docs/notify.md lists, and what a person
 * reads in one line (rule and display names). The finding's detail is left
 * to the digest and `_findings.json`, found by `id`: it would be most of each
 * alert's bytes, and tens of thousands of alerts are sent every run.
 */
function findingAlert(
  f: FindingIn,
  rule: string,
  name: string,
  site: string,
  time: string,
  endsAt: string,
): PostableAlert {
  const firstSeen = f.firstSeen !== undefined ? clean(f.firstSeen) : undefined;
  return {
    labels: { alertname: 'SvcSnapshotFinding', rule, severity: f.severity, site, id: clip(clean(idOf(f)), 200) },
    annotations: { summary: clip(`${rule}: ${name}`, 500) },
    startsAt: firstSeen !== undefined && !Number.isNaN(Date.parse(firstSeen)) ? firstSeen : time,
    endsAt,
  };
}
