import { describe, expect, it } from 'vitest';
import { esc, shown, MAX_SHOWN } from '../../src/report/escape.js';
import { CHANGES_SHOWN, CSP, renderReport } from '../../src/report/render.js';
import { countChart } from '../../src/report/svg.js';
import type { ReportModel } from '../../src/report/model.js';
import type { ChangeSet, ExportDiff } from '../../src/diff/types.js';
import type { FindingsReport } from '../../src/findings/evaluate.js';
import { HOSTILE_NAMES } from '../helpers/hostile-names.js';

/** Every tag and attribute name of the page: no `<` from the data survives escaping, so each `<` opens one of the page's own tags. */
function markup(html: string): { tags: Set<string>; attributes: Set<string> } {
  const tags = new Set<string>();
  const attributes = new Set<string>();
  for (const m of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
    tags.add(m[1]!.toLowerCase());
    for (const a of m[2]!.replace(/"[^"]*"/g, '""').matchAll(/([a-zA-Z-:]+)=/g)) attributes.add(a[1]!.toLowerCase());
  }
  return { tags, attributes };
}

const PAGE_TAGS = [
  '!doctype',
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'header',
  'h1',
  'h2',
  'h3',
  'dl',
  'dt',
  'dd',
  'time',
  'bdi',
  'nav',
  'ul',
  'li',
  'a',
  'main',
  'section',
  'p',
  'span',
  'strong',
  'code',
  'details',
  'summary',
  'div',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'fieldset',
  'legend',
  'input',
  'label',
  'figure',
  'figcaption',
  'svg',
  'title',
  'line',
  'g',
  'polyline',
  'circle',
  'text',
  'footer',
];
const PAGE_ATTRIBUTES = [
  'lang',
  'charset',
  'http-equiv',
  'content',
  'name',
  'id',
  'aria-labelledby',
  'aria-label',
  'class',
  'datetime',
  'href',
  'scope',
  'type',
  'for',
  'xmlns',
  'viewbox',
  'role',
  'x1',
  'y1',
  'x2',
  'y2',
  'stroke',
  'fill',
  'stroke-width',
  'points',
  'cx',
  'cy',
  'r',
  'x',
  'y',
  'font-size',
  'text-anchor',
];

function diffOf(exportName: string, n: number, value: string): ExportDiff {
  return {
    export: exportName,
    key: ['id'],
    availability: 'both',
    older: { available: true, count: n },
    newer: { available: true, count: n + 1 },
    hasChanges: true,
    unobtainable: [],
    ignored: [],
    counts: { added: 1, removed: 1, changed: n, unchanged: 0 },
    added: [{ id: value, name: value }],
    removed: [{ id: `${value}-gone`, name: value }],
    changed: Array.from({ length: n }, (_, i) => ({
      key: { id: `${value}-${i}` },
      changes: [{ column: 'name', old: value, new: `${value}!` }],
    })),
  };
}

function modelWith(value: string, changed = 2): ReportModel {
  const changes: ChangeSet = {
    command: 'diff',
    schemaVersion: 1,
    older: { dir: '/x/older', kind: 'snapshot', baseUrl: value, time: '2026-11-20T02:00:00.000Z', date: '2026-11-20' },
    newer: { dir: '/x/newer', kind: 'snapshot', baseUrl: value, time: '2026-11-21T02:00:00.000Z', date: '2026-11-21' },
    hasChanges: true,
    ignore: ['lastLogin'],
    totals: { added: 1, removed: 1, changed, exportsChanged: 1 },
    exports: [diffOf('users', changed, value)],
  };
  return {
    manifest: {
      baseUrl: value,
      time: '2026-11-21T02:00:00.000Z',
      date: '2026-11-21',
      source: 'live',
      tool: { name: 'svc-snapshot', version: '1.0.0' },
      complete: false,
      exports: [
        { export: 'users', file: 'users.json', count: changed + 1, available: true },
        { export: 'teams', file: 'teams.json', count: 0, available: false, reason: value, proposedRoute: value },
      ],
      nullFields: [{ export: 'users', field: value, reason: value, proposedRoute: value }],
      validation: { issues: 1, samples: [{ route: value, index: 0, path: value, message: value }] },
      drift: [{ route: value, unknownFields: [value] }],
    },
    signature: { state: 'invalid', key: value, reason: value },
    findings: {
      report: {
        time: '2026-11-21T02:00:00.000Z',
        rules: [
          { id: 'certification-missing', severity: 'high', evaluated: true, count: 1 },
          { id: 'quota', severity: 'low', evaluated: false, reason: value, count: null },
        ],
        findings: [
          {
            id: '2ed6657d-e927-568b-95e1-2665a8aea6a2',
            rule: 'certification-missing',
            severity: 'high',
            subject: { export: 'users', key: [value] },
            related: [],
            detail: value,
            display: { user: value, project: value },
          },
        ],
      },
    },
    previous: { name: value, changes },
    history: {
      label: value,
      nights: [
        { time: '2026-11-20T02:00:00.000Z', date: '2026-11-20', counts: { users: 2, [value]: 3 } },
        { time: '2026-11-21T02:00:00.000Z', date: '2026-11-21', counts: { users: 3 } },
      ],
    },
    vms: [
      {
        export: 'active_vms',
        column: 'state',
        counts: [
          [value, 2],
          ['running', 1],
        ],
      },
    ],
  };
}

describe('the report page escapes every value from the site', () => {
  it('escapes the five characters that could close text or an attribute', () => {
    expect(esc(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('spells bidi overrides and other controls, and cuts a 50,000-character name saying how much is not shown', () => {
    expect(shown('\u202Egnp.exe')).toBe('\\u202egnp.exe');
    expect(shown('a\nb')).toBe('a\\u000ab');
    const long = shown('y'.repeat(50_000));
    expect(long).toBe(`${'y'.repeat(MAX_SHOWN)}… (${50_000 - MAX_SHOWN} more characters)`);
  });

  for (const value of HOSTILE_NAMES) {
    it(`shows ${JSON.stringify(value.slice(0, 40))} in every place as text, never as a tag or an attribute`, () => {
      const html = renderReport(modelWith(value));
      const { tags, attributes } = markup(html);
      expect([...tags].filter((t) => !PAGE_TAGS.includes(t))).toEqual([]);
      expect([...attributes].filter((a) => !PAGE_ATTRIBUTES.includes(a))).toEqual([]);
      expect(html).not.toMatch(/<script|<img|<iframe|<svg on/i);
      // Links only to the page's own sections.
      for (const m of html.matchAll(/href="([^"]*)"/g)) expect(m[1]).toMatch(/^#[a-z]+$/);
      expect(html).not.toContain('\u202E');
      expect(html.length).toBeLessThan(60_000);
      expect(html).toContain(esc(shown(value)));
    });
  }
});

describe('the report page', () => {
  it('carries a Content-Security-Policy that forbids every request and allows no script', () => {
    const html = renderReport(modelWith('alice'));
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${CSP}">`);
    expect(CSP).toMatch(/^default-src 'none';/);
    expect(CSP).not.toMatch(/script-src/);
    expect(html).toMatch(/@media print\{/);
  });

  it('is the same bytes for the same model', () => {
    expect(renderReport(modelWith('alice', 7))).toBe(renderReport(modelWith('alice', 7)));
  });

  it('shows the site, time, completeness and signature first, then the findings before the exports', () => {
    const html = renderReport(modelWith('https://platform.example.org'));
    const order = [
      '<h1>Snapshot of <bdi>https://platform.example.org</bdi>, 2026-11-21</h1>',
      '2026-11-21T02:00:00Z',
      'partial',
      'invalid',
      'id="findings"',
      'id="exports"',
      'id="changes"',
      'id="availability"',
      'id="validation"',
      'id="drift"',
      'id="trends"',
      'id="vms"',
    ];
    const at = order.map((s) => html.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it(`shows at most ${CHANGES_SHOWN} changed records of an export and says how many more there are`, () => {
    const html = renderReport(modelWith('u', 120));
    expect(html.match(/<tr class="(added|removed|changed)">/g)).toHaveLength(CHANGES_SHOWN);
    expect(html).toContain(`<p class="more">${122 - CHANGES_SHOWN} more changed records not shown.</p>`);
    expect(html).toContain('1 added, 1 removed, 120 changed');
  });

  it('says added, removed and changed in words, not only in colour', () => {
    const html = renderReport(modelWith('u'));
    expect(html).toContain('<td class="num added">+1<span class="vh"> added</span></td>');
    expect(html).toContain('<tr class="removed"><td class="nw">removed</td>');
  });

  it('shows the changes as a person reads them: ids by name, times in ISO 8601 UTC, sizes in binary units, no UUID', () => {
    const m = modelWith('u');
    const user = '996f25a8-3527-42e3-a038-541dc1ba6043';
    const unknown = 'sreq|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b70';
    const d: ExportDiff = {
      ...diffOf('users', 1, 'u'),
      added: [{ id: 'fc5bc173-ac24-42d7-92ca-8fefdf42e4e1', email: 'femi@example.org' }],
      changed: [
        {
          key: { id: user },
          changes: [
            { column: 'expiration', old: null, new: 1763690400000 },
            { column: 'vaultBytes', old: 1536, new: 10485760 },
            { column: 'requirements', old: ['sreq|nda'], new: ['sreq|nda', unknown] },
          ],
        },
      ],
    };
    const changes = { ...(m.previous as { changes: ChangeSet }).changes, exports: [d] };
    const names = new Map([
      [user, 'Priya Tanaka'],
      ['sreq|nda', 'Requirement 2: NDA'],
    ]);
    const html = renderReport({ ...m, previous: { name: 'older', changes }, names });
    const section = html.slice(html.indexOf('<section id="changes"'), html.indexOf('<section id="availability"'));
    expect(section).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(section).toContain('<span class="k">id</span>=<bdi>Priya Tanaka</bdi>');
    expect(section).toContain('<bdi class="new">2025-11-21T02:00:00Z</bdi>');
    expect(section).toContain('<bdi class="old">1.5 KiB</bdi> → <bdi class="new">10.0 MiB</bdi>');
    expect(section).toContain('<bdi class="new">Requirement 2: NDA, …</bdi>');
    // An added record without a name given: its id left out, its label beside it.
    expect(section).toContain(
      '<span class="k">id</span>=<bdi>…</bdi> <span class="k">email</span>=<bdi>femi@example.org</bdi>',
    );
  });

  it('lists each waiver with owner, reason and end date, the resolved findings dated, the carried ones with their reason', () => {
    const m = modelWith('u');
    const base = (m.findings as { report: FindingsReport }).report;
    const prior = {
      id: 'f2',
      rule: 'quota',
      severity: 'low' as const,
      subject: { export: 'teams', key: ['team|cf57d6b4-dc48-4249-96e2-24cfc8c1dbeb'] },
      detail: 'team "Imaging" (team|cf57d6b4-dc48-4249-96e2-24cfc8c1dbeb) uses 40 cores',
      display: { team: 'Imaging' },
      firstSeen: '2026-11-19T02:00:00.000Z',
    };
    const report: FindingsReport = {
      ...base,
      findings: [],
      previous: { time: '2026-11-20T02:00:00.000Z', source: 'snapshot' },
      resolved: [{ ...prior, id: 'f3', rule: 'certification-missing', severity: 'high' }],
      carried: [prior],
      waivers: {
        sha256: 'abc',
        entries: 2,
        stale: [
          {
            line: 3,
            rule: 'quota',
            subject: ['team|cf57d6b4-dc48-4249-96e2-24cfc8c1dbeb'],
            owner: 'ops@x',
            reason: 'extra cores',
            expires: '2027-01-15',
          },
          { line: 9, rule: 'quota', subject: ['team|gone'], owner: 'ops@x', reason: 'old', expires: '2027-01-16' },
        ],
        endingSoon: [],
        ended: [],
      },
    };
    const html = renderReport({ ...m, findings: { report } });
    expect(html).toContain(
      '<li>line 3: <code>quota</code>, <bdi>team Imaging</bdi>: extra cores (<bdi>ops@x</bdi>, until 2027-01-15)</li>',
    );
    // Matching no finding known: the subject as the file writes it.
    expect(html).toContain(
      '<li>line 9: <code>quota</code>, <bdi>subject team|gone</bdi>: old (<bdi>ops@x</bdi>, until 2027-01-16)</li>',
    );
    expect(html).toContain('<td class="nw">2026-11-21</td><td class="nw">2026-11-19</td></tr>');
    const carried = html.slice(html.indexOf('<summary>Carried: 1 finding</summary>'));
    expect(carried).toContain(
      '<td>team &quot;Imaging&quot; uses 40 cores</td><td>u</td><td class="nw">2026-11-19</td>',
    );
    expect(html).not.toContain('cf57d6b4');
  });

  it('leaves out the VMs and the trends when the snapshot has no VM export and no history was given', () => {
    const { history: _h, vms: _v, ...rest } = modelWith('u');
    const html = renderReport(rest);
    expect(html).not.toContain('id="vms"');
    expect(html).not.toContain('id="trends"');
    expect(html).not.toContain('<svg');
  });
});

describe('the trend chart', () => {
  it('draws a line per run of nights with a count, a dot for a lone night, and names the export only as escaped text', () => {
    const svg = countChart('c1', '<b>x</b>', [
      { date: '2026-11-01', count: 3 },
      { date: '2026-11-02', count: 5 },
      { date: '2026-11-03', count: undefined },
      { date: '2026-11-04', count: 4 },
    ]);
    expect(svg.match(/<polyline /g)).toHaveLength(1);
    expect(svg.match(/<circle /g)).toHaveLength(1);
    expect(svg).toContain('<title id="c1">&lt;b&gt;x&lt;/b&gt;: 3 to 5 records over 4 nights, 4 on 2026-11-04</title>');
    expect(svg).not.toContain('<b>');
  });

  it('draws a flat series in the middle and an empty one without points', () => {
    expect(
      countChart('c', 'e', [
        { date: 'd', count: 2 },
        { date: 'e', count: 2 },
      ]),
    ).toContain('points="6,36 234,36"');
    expect(countChart('c', 'e', [])).not.toMatch(/<polyline|<circle/);
  });
});
