/**
 * The digest shows the first findings of a list, most severe first, and
 * counts the rest ("and N more"); Alertmanager gets one small alert per
 * finding at or above the severity, in batches made one at a time. The lists
 * here are checked against a plain sort of every finding, the order the
 * digest has always promised.
 */
import { describe, expect, it } from 'vitest';
import { buildDigest, firstInOrder, nameOf } from '../../src/notify/digest.js';
import type { FindingIn } from '../../src/findings/file.js';
import { alertsOf, slackPayload, webhookPayload, emailContent } from '../../src/notify/formats.js';
import { alertmanagerPosts } from '../../src/notify/send.js';
import { readTargets } from '../../src/notify/targets.js';
import { escapeControl } from '../../src/util/escape.js';
import { clip } from '../../src/notify/text.js';
import { HOSTILE_NAMES } from '../helpers/hostile-names.js';
import { runNotice } from '../helpers/run-notice.js';

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
const RULES = [
  'quota-exceeded',
  'certification-expired',
  'certification-missing',
  'rule\u0007bell',
  'rule[x',
  'user-expired',
];
// 'rule\u0007bell' sorts before 'rule[x' as it is, after it once cleaned ('\\' > '['): the order is the cleaned texts'.
const NAMES = ['Ann', 'ann', 'Bob', 'Zoë', 'Ann\u202e', 'Ann\u0000x', '', 'Émile', ...HOSTILE_NAMES];

/** A deterministic mix: severities, rules and names repeat, so that many findings tie and the order's every step counts. */
function findings(n: number, seed = 7): FindingIn[] {
  let x = seed;
  const next = (m: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return Math.floor((x / 2147483648) * m);
  };
  return Array.from({ length: n }, (_, i) => {
    const name = NAMES[next(NAMES.length)]!;
    return {
      rule: RULES[next(RULES.length)]!,
      severity: SEVERITIES[next(SEVERITIES.length)]!,
      subject: { export: 'users', key: [`u${i}`] },
      detail: `detail ${i}`,
      id: `id-${i}`,
      ...(next(4) > 0 ? { display: { user: name, project: `P${next(3)}` } } : {}),
    };
  });
}

/** The order the digest promises, by a full sort of every finding (stable: the report's order among equals). */
function sortedIds(list: readonly FindingIn[]): string[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return list
    .map((f) => ({
      id: f.id!,
      rank: SEVERITIES.indexOf(f.severity),
      rule: escapeControl(f.rule),
      name: escapeControl(nameOf(f)),
    }))
    .sort((a, b) => a.rank - b.rank || cmp(a.rule, b.rule) || cmp(a.name, b.name))
    .map((f) => f.id);
}

describe('firstInOrder', () => {
  it('gives the first n of a stable sort, ties in their given order', () => {
    const items = Array.from({ length: 500 }, (_, i) => ({ k: (i * 7919) % 37, i }));
    const order = (a: { k: number }, b: { k: number }) => a.k - b.k;
    const sorted = [...items].sort(order);
    for (const n of [0, 1, 2, 36, 37, 100, 499, 500, 600])
      expect(firstInOrder(items, n, order)).toEqual(sorted.slice(0, n));
    const descending = [...sorted].reverse();
    expect(firstInOrder(descending, 50, order)).toEqual([...descending].sort(order).slice(0, 50));
  });
});

describe("a finding's name", () => {
  const base = findings(1)[0]!;
  it('is its display values that are text or numbers, in their order, else its subject', () => {
    const display = { user: 'Ann', empty: '', none: null, team: 7, flag: true, nested: { x: 1 }, project: 'P 2' };
    expect(nameOf({ ...base, display })).toBe('Ann · 7 · P 2');
    expect(nameOf({ ...base, display: { a: '', b: null } })).toBe('users u0');
    const { display: _, ...bare } = base;
    expect(nameOf({ ...bare, subject: { export: 'teams', key: ['t1', 'x'] } })).toBe('teams t1 / x');
  });
});

describe('the lists the sinks show', () => {
  for (const n of [0, 1, 7, 60, 3000]) {
    it(`of ${n} finding(s) are a full sort's first, with the rest counted`, () => {
      const list = findings(n);
      const d = buildDigest(runNotice(list));
      const want = sortedIds(list);
      for (const k of [1, 20, 1000, n + 5]) expect(d.findings.top(k).map((f) => f.id)).toEqual(want.slice(0, k));
      expect(d.findings.length).toBe(n);
      const hook = webhookPayload(d) as { findings: { shown: { items: Array<{ id: string }>; more: number } } };
      expect(hook.findings.shown.items.map((f) => f.id)).toEqual(want.slice(0, 1000));
      expect(hook.findings.shown.more).toBe(Math.max(0, n - 1000));
      const slack = JSON.stringify(slackPayload(d));
      if (n > 0) expect(slack).toContain(`Findings (${n})`);
      if (n > 20) expect(slack).toContain(`and ${n - 20} more`);
      else expect(slack).not.toMatch(/and \d+ more/);
    });
  }
  it('are the same whichever sink asks first (a shorter list, then a longer one)', () => {
    const list = findings(2500, 3);
    const d = buildDigest(runNotice(list));
    const want = sortedIds(list);
    expect(d.findings.top(20).map((f) => f.id)).toEqual(want.slice(0, 20));
    expect(d.findings.top(300).map((f) => f.id)).toEqual(want.slice(0, 300));
    expect(d.findings.top(25).map((f) => f.id)).toEqual(want.slice(0, 25));
    expect(emailContent(d).text).toContain(`Findings (2500)`);
  });
  it('show cleaned texts: a control character in a name or rule is shown as \\uXXXX', () => {
    const d = buildDigest(runNotice(findings(200)));
    const shown = d.findings.top(200);
    expect(shown.some((f) => f.rule === 'rule\\u0007bell')).toBe(true);
    for (const f of shown) expect(`${f.rule}${f.name}`).not.toMatch(/[\u0000-\u001f\u202e]/);
  });
  it('with the lifecycle: the new ones and the resolved ones, each in order; waived ones apart', () => {
    const list = findings(400, 11).map((f, i) => ({
      ...f,
      state: i % 3 === 0 ? ('new' as const) : ('open' as const),
      ...(i % 5 === 0 ? { waived: { reason: 'r', owner: 'o', expires: '2027-01-01' } } : {}),
    }));
    const resolved = findings(50, 5).map((f) => ({ ...f, id: `gone-${f.id!}` }));
    const d = buildDigest({ ...runNotice(list), findings: { time: 't', rules: [], findings: list, resolved } });
    const fresh = list.filter((f) => f.state === 'new' && f.waived === undefined);
    expect(d.findings.top(1000).map((f) => f.id)).toEqual(sortedIds(fresh));
    expect(d.resolved.top(10).map((f) => f.id)).toEqual(sortedIds(resolved).slice(0, 10));
    expect(d.resolved.top(10).every((f) => f.state === 'resolved')).toBe(true);
    expect(d.active.length).toBe(list.filter((f) => f.waived === undefined).length);
    expect(d.waived.length).toBe(list.length - d.active.length);
    // One set of counts: each finding new or open, waived or not; resolved the night before's gone; active the rest.
    const waived = list.filter((f) => f.waived !== undefined).length;
    expect(d.counts).toEqual({
      new: list.filter((f) => f.state === 'new').length,
      open: list.filter((f) => f.state === 'open').length,
      resolved: resolved.length,
      waived,
      active: list.length - waived,
    });
  });
});

describe('Alertmanager', () => {
  const now = new Date('2026-11-22T02:05:00.000Z');
  const settings = { severity: 'high' as const, intervalHours: 26, now };

  it('one alert per finding at or above the severity: the contract labels, a one-line summary, nothing else', () => {
    const list = findings(300);
    const alerts = [...alertsOf(buildDigest(runNotice(list)), settings)];
    const paging = list.filter((f) => f.severity === 'critical' || f.severity === 'high');
    const mine = alerts.filter((a) => a.labels.alertname === 'SvcSnapshotFinding');
    expect(mine.map((a) => a.labels.id).sort()).toEqual(paging.map((f) => f.id).sort());
    for (const a of mine) {
      expect(Object.keys(a).sort()).toEqual(['annotations', 'endsAt', 'labels', 'startsAt']);
      expect(Object.keys(a.labels).sort()).toEqual(['alertname', 'id', 'rule', 'severity', 'site']);
      expect(Object.keys(a.annotations)).toEqual(['summary']);
      expect(a.startsAt).toBe('2026-11-22T02:00:00.000Z');
      expect(a.endsAt).toBe('2026-11-23T04:05:00.000Z');
    }
    const bell = mine.find((a) => a.labels.rule === 'rule\\u0007bell')!;
    expect(bell.labels.rule).toBe('rule\\u0007bell');
    const f = list.find((x) => x.id === bell.labels.id)!;
    expect(bell.annotations.summary).toBe(clip(`rule\\u0007bell: ${escapeControl(nameOf(f))}`, 500));
  });
  it('a name of 50,000 characters is cut in the summary', () => {
    const long: FindingIn = { ...findings(1)[0]!, severity: 'high', display: { user: HOSTILE_NAMES[6] } };
    const [, a] = [...alertsOf(buildDigest(runNotice([long])), settings)];
    expect(a!.annotations.summary!.length).toBeLessThanOrEqual(500);
  });
  it('POSTs batches of 2,000 compact alerts, each made when the one before it is sent', () => {
    const [target] = readTargets(['alertmanager+http://127.0.0.1:9093'], {});
    let pulled = 0;
    function* alerts() {
      for (let i = 0; i < 4500; i++) {
        pulled++;
        yield { labels: { id: `a${i}` } };
      }
    }
    const posts = alertmanagerPosts(target as Parameters<typeof alertmanagerPosts>[0], alerts());
    const first = posts.next();
    expect(pulled).toBeLessThanOrEqual(2001);
    const bodies = [first.value!.body, ...[...posts].map((p) => p.body)];
    expect(bodies.map((b) => (JSON.parse(b) as unknown[]).length)).toEqual([2000, 2000, 500]);
    expect(bodies.flatMap((b) => (JSON.parse(b) as Array<{ labels: { id: string } }>).map((a) => a.labels.id))).toEqual(
      Array.from({ length: 4500 }, (_, i) => `a${i}`),
    );
    expect(bodies[0]).not.toMatch(/\n| {2}/);
    expect(first.value!.url).toBe('http://127.0.0.1:9093/api/v2/alerts');
  });
});
