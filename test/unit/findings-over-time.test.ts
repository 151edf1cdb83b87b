/**
 * CONTRACT section 18 over export records, through the one evaluator: the
 * findings' stable ids and display names, the lifecycle against a previous
 * night, the waivers file (read, refused, applied), the text grouped by
 * person and the CSV.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXPORTS } from '../../src/exports/catalog.js';
import { evaluateFindings, failing, findingCounts, type FindingsReport } from '../../src/findings/evaluate.js';
import { serializeFindings } from '../helpers/findings-json.js';
import { FINDING_ID_NAMESPACE, findingId, uuidV5 } from '../../src/findings/identity.js';
import { applyLifecycle, parseFindingsFile } from '../../src/findings/lifecycle.js';
import { applyWaivers, checkWaiverDates, loadWaivers } from '../../src/findings/waivers.js';
import { formatFindings } from '../../src/findings/format.js';
import { findingsCsvChunks } from '../../src/findings/csv.js';
import { findingsSettings, overTime } from '../../src/findings/index.js';
import { UsageError } from '../../src/errors.js';
import { parseCsv } from '../helpers/csv-parse.js';
import { tmpDir } from '../helpers/run-cli.js';
import { rec, type Rec } from '../helpers/snapshot-dir.js';

const TIME = '2026-11-21T02:00:00.000Z';
const NOW = Date.parse(TIME);

function evaluate(records: Record<string, Rec[]>, time = TIME): Promise<FindingsReport> {
  const manifest = {
    time,
    exports: EXPORTS.map((d) => ({ export: d.name, available: true })),
    nullFields: [],
  };
  const built = Object.fromEntries(Object.entries(records).map(([n, rows]) => [n, rows.map((r) => rec(n, r))]));
  return evaluateFindings(manifest, async (name) => built[name] ?? []);
}

/** Project P1 (level L1: NDA and Course); Ada lacks both, Bob lacks the NDA; a user listed with no name; team T over its quota. */
function site(): Record<string, Rec[]> {
  return {
    users: [
      { id: 'u-ada', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.org' },
      { id: 'u-bob', firstName: 'Bob', lastName: '', email: 'bob@example.org' },
      { id: 'u-gone', firstName: '', lastName: '', email: '' },
    ],
    projects: [{ id: 'proj|1', name: '=Genome', securityLevel: 'slvl|1', parent: null }],
    security_levels: [{ id: 'slvl|1', name: 'Secret', requirements: ['sreq|nda', 'sreq|course'] }],
    security_requirements: [
      { id: 'sreq|nda', name: 'NDA' },
      { id: 'sreq|course', name: 'Course' },
    ],
    project_memberships: [
      { id: 'm1', projectID: 'proj|1', userID: 'u-ada', duplicate: false },
      { id: 'm2', projectID: 'proj|1', userID: 'u-bob', duplicate: false },
      { id: 'm3', projectID: 'proj|1', userID: 'u-gone', duplicate: false },
      { id: 'm4', projectID: 'proj|1', userID: 'u-unlisted', duplicate: false },
    ],
    user_certifications: [
      { id: 'c1', userID: 'u-bob', requirementID: 'sreq|course', expires: null },
      { id: 'c2', userID: 'u-gone', requirementID: 'sreq|course', expires: null },
      { id: 'c3', userID: 'u-gone', requirementID: 'sreq|nda', expires: null },
      { id: 'c4', userID: 'u-unlisted', requirementID: 'sreq|course', expires: null },
      { id: 'c5', userID: 'u-unlisted', requirementID: 'sreq|nda', expires: null },
    ],
    teams: [
      {
        id: 'team|t',
        name: 'Imaging',
        teamQuotas_cores: 4,
        teamQuotas_memory: 10,
        usage_vms_cores: 5,
        usage_vms_mem: 11,
      },
    ],
  };
}

function waiversFile(text: string, name = 'waivers.yaml'): string {
  const dir = tmpDir('svc-waivers-');
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const entry = (fields: Record<string, string>) =>
  `  - ${Object.entries(fields)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n    ')}\n`;

describe('ids and names', () => {
  it('a UUID v5 as RFC 9562 makes it (the DNS namespace example), and the namespace is the v5 of its documented name', () => {
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
    expect(uuidV5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'svc-snapshot findings')).toBe(FINDING_ID_NAMESPACE);
  });

  it('each finding has its own id, the same whatever the night or the order of the records; the part tells one subject apart', async () => {
    const a = await evaluate(site());
    const shuffled = Object.fromEntries(Object.entries(site()).map(([k, v]) => [k, [...v].reverse()]));
    const b = await evaluate(shuffled, '2026-11-22T02:00:00.000Z');
    const ids = a.findings.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(b.findings.map((f) => f.id).sort()).toEqual([...ids].sort());
    const quota = a.findings.filter((f) => f.rule === 'quota-exceeded');
    expect(quota.map((f) => f.id).sort()).toEqual(
      ['cores', 'memory'].map((p) => findingId('quota-exceeded', { export: 'teams', key: ['team|t'] }, p)).sort(),
    );
  });

  it('display names the user, e-mail, project, requirement, level and team; a user with no name, or not listed, is a deleted user', async () => {
    const r = await evaluate(site());
    const ada = r.findings.filter((f) => f.subject.key[1] === 'u-ada');
    expect(ada.map((f) => f.display)).toEqual([
      { user: 'Ada Lovelace', email: 'ada@example.org', project: '=Genome', requirement: 'Course', level: 'Secret' },
      { user: 'Ada Lovelace', email: 'ada@example.org', project: '=Genome', requirement: 'NDA', level: 'Secret' },
    ]);
    expect(r.findings.find((f) => f.subject.key[1] === 'u-bob')!.display.user).toBe('Bob');
    const quota = r.findings.find((f) => f.rule === 'quota-exceeded')!;
    expect(quota.display).toEqual({ team: 'Imaging' });
    const gone = await evaluate({ ...site(), user_certifications: [] });
    expect(gone.findings.find((f) => f.subject.key[1] === 'u-gone')!.display.user).toBe('deleted user u-gone');
    expect(gone.findings.find((f) => f.subject.key[1] === 'u-unlisted')!.display.user).toBe('deleted user u-unlisted');
  });

  it('the text groups by person, then project: one person missing two requirements of one project is one entry', async () => {
    const text = formatFindings(await evaluate(site()), '/snap');
    const lines = text.split('\n');
    const at = lines.indexOf('Ada Lovelace <ada@example.org>');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('  project =Genome');
    expect(lines[at + 2]).toMatch(/^ {4}HIGH +certification-missing +requirement "Course" of level "Secret"/);
    expect(lines[at + 3]).toMatch(/^ {4}HIGH +certification-missing +requirement "NDA" of level "Secret"/);
    expect(lines.filter((l) => l === 'Ada Lovelace <ada@example.org>')).toHaveLength(1);
    expect(lines).toContain('team Imaging');
  });
});

describe('new, open, resolved', () => {
  it('a finding seen the night before is open since its first night; a new one is new; one gone is resolved', async () => {
    const first = await evaluate(site(), '2026-11-20T02:00:00.000Z');
    const night1 = applyLifecycle(first, {
      night: { time: '2026-11-19T02:00:00.000Z', source: 'snapshot' },
      findings: [],
    });
    expect(night1.findings.every((f) => f.state === 'new' && f.firstSeen === first.time)).toBe(true);
    // The second night: Ada holds the NDA now; Bob's membership is new in another project.
    const next = site();
    next.user_certifications!.push({ id: 'c9', userID: 'u-ada', requirementID: 'sreq|nda', expires: null });
    next.projects!.push({ id: 'proj|2', name: 'Other', securityLevel: 'slvl|1', parent: null });
    next.project_memberships!.push({ id: 'm9', projectID: 'proj|2', userID: 'u-bob', duplicate: false });
    const second = applyLifecycle(await evaluate(next), {
      night: { time: first.time, source: 'snapshot' },
      findings: night1.findings,
    });
    const byState = (s: string) => second.findings.filter((f) => f.state === s);
    expect(byState('new').map((f) => [f.subject.key[0], f.display.requirement])).toEqual([['proj|2', 'NDA']]);
    expect(byState('open').every((f) => f.firstSeen === first.time)).toBe(true);
    expect(second.resolved!.map((f) => [f.subject.key[1], f.display.requirement, f.firstSeen])).toEqual([
      ['u-ada', 'NDA', first.time],
    ]);
    expect(second.previous).toEqual({ time: first.time, source: 'snapshot' });
    expect(formatFindings(second, '/snap')).toMatch(
      /Since the snapshot of 2026-11-20T02:00:00Z: 1 new, \d+ open, 1 resolved, 0 waived, \d+ active\.\nNew:\n/,
    );
  });
});

/** Tonight's findings of the site, the certifications not read (a failed route): their rules not evaluated. */
async function withoutCertifications() {
  const manifest = {
    time: TIME,
    exports: EXPORTS.map((d) =>
      d.name === 'user_certifications'
        ? { export: d.name, available: false, reason: 'GET /api/users/certifications failed' }
        : { export: d.name, available: true },
    ),
    nullFields: [],
  };
  const records = site();
  return evaluateFindings(manifest, async (name) => (records[name] ?? []).map((r) => rec(name, r)));
}

describe('a rule not evaluated tonight', () => {
  it('carries its findings of the night before, not resolved; the next night keeps their firstSeen', async () => {
    const first = applyLifecycle(await evaluate(site(), '2026-11-20T02:00:00.000Z'), {
      night: { time: '2026-11-19T02:00:00.000Z', source: 'snapshot' },
      findings: [],
    });
    const missing = first.findings.filter((f) => f.rule === 'certification-missing').map((f) => f.id);
    expect(missing.length).toBeGreaterThan(0);
    // Tonight the certifications could not be read (a failed route): their rules are not evaluated.
    const tonight = applyLifecycle(await withoutCertifications(), {
      night: { time: first.time, source: 'snapshot' },
      findings: first.findings,
    });
    expect(tonight.rules.find((r) => r.id === 'certification-missing')!.evaluated).toBe(false);
    expect(tonight.resolved!.filter((f) => f.rule === 'certification-missing')).toEqual([]);
    expect(tonight.carried!.map((f) => [f.id, f.firstSeen])).toEqual(missing.map((id) => [id, first.time]));
    expect(formatFindings(tonight, '/snap')).toMatch(/: 0 new, \d+ open, 0 resolved, 0 waived, \d+ active\./);
    // A waiver of a rule that could not look is not stale.
    const path = waiversFile(
      `waivers:\n  - rule: certification-missing\n    subject: [proj|9]\n    reason: r\n    owner: o\n    expires: 2027-01-01\n`,
    );
    const unevaluated = new Set(tonight.rules.filter((r) => !r.evaluated).map((r) => r.id));
    expect(applyWaivers(tonight.findings, loadWaivers(path, '--waivers'), NOW, 30, unevaluated).summary.stale).toEqual(
      [],
    );
    expect(applyWaivers(tonight.findings, loadWaivers(path, '--waivers'), NOW, 30).summary.stale).toHaveLength(1);
    // The next night reads tonight's _findings.json: the carried findings are the previous night's.
    const back = parseFindingsFile(serializeFindings(tonight))!;
    const third = applyLifecycle(await evaluate(site(), '2026-11-22T02:00:00.000Z'), {
      night: { time: back.time, source: 'snapshot' },
      findings: back.findings,
    });
    const again = third.findings.filter((f) => f.rule === 'certification-missing');
    expect(again.map((f) => [f.id, f.state, f.firstSeen])).toEqual(missing.map((id) => [id, 'open', first.time]));
    expect(third.resolved).toEqual([]);
    expect(third.carried).toBeUndefined();
  });
});

describe("a carried finding's waiver", () => {
  it("is tonight's: one ended since no longer applies, one added tonight does, none without a file; the CSV shows it", async () => {
    const waiver = (user: string, expires: string) =>
      entry({ rule: 'certification-missing', subject: `[proj|1, ${user}]`, reason: 'r', owner: `${user}@o`, expires });
    // The night before: Ada's two findings waived until the end of that night's day.
    const before = overTime(await evaluate(site(), '2026-11-20T02:00:00.000Z'), undefined, {
      waivers: loadWaivers(waiversFile(`waivers:\n${waiver('u-ada', '2026-11-20')}`), '--waivers'),
      expiringDays: 30,
    });
    const certs = (r: { findings: FindingsReport['findings'] }) =>
      r.findings.filter((f) => f.rule === 'certification-missing');
    expect(certs(before).map((f) => [f.subject.key[1], f.waived?.owner])).toEqual([
      ['u-ada', 'u-ada@o'],
      ['u-ada', 'u-ada@o'],
      ['u-bob', undefined],
    ]);
    // Tonight the certifications could not be read; Ada's waiver has ended, one for Bob was added.
    const evaluated = await withoutCertifications();
    const previous = {
      night: { time: before.time, source: 'snapshot' as const },
      ...parseFindingsFile(serializeFindings(before))!,
    };
    const file = loadWaivers(
      waiversFile(`waivers:\n${waiver('u-ada', '2026-11-20')}${waiver('u-bob', '2027-01-01')}`),
      '--waivers',
    );
    const tonight = overTime(evaluated, previous, { waivers: file, expiringDays: 30 });
    const carried = tonight.carried!.filter((f) => f.rule === 'certification-missing');
    expect(carried.map((f) => [f.subject.key[1], f.waived?.owner])).toEqual([
      ['u-ada', undefined],
      ['u-ada', undefined],
      ['u-bob', 'u-bob@o'],
    ]);
    // Bob's waiver matches a carried finding alone: not stale. Ada's has ended.
    expect(tonight.waivers!.stale).toEqual([]);
    expect(tonight.waivers!.ended.map((n) => n.subject)).toEqual([['proj|1', 'u-ada']]);
    // The counts and --fail-on are tonight's findings' alone: the carried ones belong to a rule not evaluated.
    expect(findingCounts(tonight).some((c) => c.rule === 'certification-missing')).toBe(false);
    // Written and read back: the next night sees tonight's waivers on them.
    expect(
      parseFindingsFile(serializeFindings(tonight))!
        .findings.filter((f) => f.waived)
        .map((f) => f.subject.key[1]),
    ).toEqual(['u-bob']);
    const rows = parseCsv([...findingsCsvChunks(tonight)].join('').slice(1));
    const header = rows[0]!;
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    expect(
      rows
        .filter((row) => col(row, 'state') === 'carried' && col(row, 'rule') === 'certification-missing')
        .map((row) => [col(row, 'user'), col(row, 'waived_owner'), col(row, 'waived_expires')]),
    ).toEqual([
      ['Ada Lovelace', '', ''],
      ['Ada Lovelace', '', ''],
      ['Bob', 'u-bob@o', '2027-01-01'],
    ]);
    // Without a waivers file tonight, no carried finding is waived.
    expect(overTime(evaluated, previous, { expiringDays: 30 }).carried!.filter((f) => f.waived)).toEqual([]);
  });
});

describe("the previous night's _findings.json", () => {
  it('reads back what this version writes; refuses an earlier file (no ids) and members of the wrong type', async () => {
    const r = await evaluate(site());
    const text = serializeFindings(r);
    expect(parseFindingsFile(text)!.findings.map((f) => f.id)).toEqual(r.findings.map((f) => f.id));
    const json = JSON.parse(text) as { findings: Array<Record<string, unknown>> };
    const without = (change: (f: Record<string, unknown>) => void) => {
      const copy = JSON.parse(text) as typeof json;
      change(copy.findings[0]!);
      return parseFindingsFile(JSON.stringify(copy));
    };
    expect(json.findings.length).toBeGreaterThan(0);
    expect(without((f) => delete f.id)).toBeUndefined();
    expect(without((f) => (f.waived = 'yes'))).toBeUndefined();
    expect(without((f) => (f.display = { user: 1 }))).toBeUndefined();
    expect(without((f) => (f.severity = 'urgent'))).toBeUndefined();
    expect(without((f) => (f.subject = { export: 'users', key: [1] }))).toBeUndefined();
    expect(parseFindingsFile('{"time": "x", "findings": [')).toBeUndefined();
  });
});

describe('waivers', () => {
  const good = (extra = '') =>
    'waivers:\n' +
    entry({
      rule: 'certification-missing',
      subject: '["proj|1", "u-ada"]',
      reason: 'NDA being signed',
      owner: 'alice@example.org',
      expires: '2026-12-15',
    }) +
    extra;

  it('a waiver in force waives what it matches (a key prefix); an ended one does not; one matching nothing is stale', async () => {
    const path = waiversFile(
      good(
        entry({ rule: 'quota-exceeded', subject: '[team|t]', reason: 'granted', owner: 'bob', expires: '2026-11-20' }) +
          entry({
            rule: 'membership-expired',
            subject: '[proj|1]',
            reason: 'r',
            owner: 'carol',
            expires: '2027-01-01',
          }),
      ),
    );
    const file = loadWaivers(path, '--waivers');
    expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    const r = await evaluate(site());
    const { findings, summary } = applyWaivers(r.findings, file, NOW, 30);
    const waived = findings.filter((f) => f.waived);
    expect(waived.map((f) => [f.subject.key[1], f.display.requirement])).toEqual([
      ['u-ada', 'Course'],
      ['u-ada', 'NDA'],
    ]);
    expect(waived[0]!.waived).toEqual({
      reason: 'NDA being signed',
      owner: 'alice@example.org',
      expires: '2026-12-15',
    });
    const quota = findings.filter((f) => f.rule === 'quota-exceeded');
    expect(quota.every((f) => !f.waived && f.waiverEnded?.owner === 'bob')).toBe(true);
    expect(summary.ended.map((n) => n.line)).toEqual([7]);
    expect(summary.stale.map((n) => [n.line, n.owner])).toEqual([[12, 'carol']]);
    expect(summary.endingSoon.map((n) => n.line)).toEqual([2]);
    // --fail-on and the metrics count what is not waived.
    const report = { ...r, findings, waivers: summary };
    expect(failing(report, { severity: 'high', unevaluated: true }).findings).toBe(
      r.findings.filter((f) => f.severity === 'high').length - 2,
    );
    expect(findingCounts(report).find((c) => c.rule === 'certification-missing')).toMatchObject({ waived: 2 });
  });

  it('applies through its expires day, compared with the snapshot time; by id too', async () => {
    const r = await evaluate(site());
    const target = r.findings.find((f) => f.rule === 'quota-exceeded')!;
    const path = waiversFile(
      `waivers:\n${entry({ rule: 'quota-exceeded', id: target.id, reason: 'r', owner: 'o', expires: '2026-11-21' })}`,
    );
    const file = loadWaivers(path, 'SVC_WAIVERS');
    const at = (time: string) =>
      applyWaivers(r.findings, file, Date.parse(time), 30)
        .findings.filter((f) => f.waived)
        .map((f) => f.id);
    expect(at('2026-11-21T23:59:59.999Z')).toEqual([target.id]);
    expect(at('2026-11-22T00:00:00.000Z')).toEqual([]);
  });

  it.each([
    ['not YAML', 'waivers:\n  - rule: [unclosed\n', /line \d+: not YAML or JSON/],
    [
      'JSON missing a comma on line 5',
      '{\n "waivers": [\n  {"rule": "quota-exceeded",\n   "subject": ["x"],\n   "reason": "r" "owner": "o"}\n ]\n}\n',
      /line 5: not YAML or JSON/,
    ],
    [
      'a line break in owner',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: 'r', owner: '"ev\\nil\\u2028"', expires: '2027-01-01' })}`,
      /line 2: owner holds control, line-break or bidirectional characters/,
    ],
    ['no waivers list', 'rules: []\n', /line 1: the file must hold a top-level waivers list/],
    [
      'an unknown rule',
      `waivers:\n${entry({ rule: 'no-such-rule', id: 'x', reason: 'r', owner: 'o', expires: '2027-01-01' })}`,
      /line 2: rule "no-such-rule" is not a findings rule/,
    ],
    [
      'no expires',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: 'r', owner: 'o' })}`,
      /line 2: expires is missing/,
    ],
    [
      'a date that is not one',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: 'r', owner: 'o', expires: '2027-02-30' })}`,
      /line 2: expires "2027-02-30" is not a date/,
    ],
    [
      'duplicate entries',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: 'r', owner: 'o', expires: '2027-01-01' }).repeat(2)}`,
      /line 7: the same rule and match as the waiver of line 2/,
    ],
    [
      'a duplicate key',
      'waivers:\n  - rule: quota-exceeded\n    rule: quota-exceeded\n',
      /line 3: not YAML or JSON \(duplicate key\)/,
    ],
    [
      'an unknown field',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: 'r', owner: 'o', expire: '2027-01-01' })}`,
      /line 6: unknown field "expire"/,
    ],
    [
      'hostile text in reason',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', reason: '"ok\\u001b[2J\\u202e"', owner: 'o', expires: '2027-01-01' })}`,
      /line 2: reason holds control, line-break or bidirectional characters/,
    ],
    [
      'both matches',
      `waivers:\n${entry({ rule: 'quota-exceeded', subject: '[a]', id: 'x', reason: 'r', owner: 'o', expires: '2027-01-01' })}`,
      /line 2: give one match/,
    ],
  ])('refuses %s as a usage error naming the line', (_what, text, message) => {
    const path = waiversFile(text);
    let thrown: unknown;
    try {
      loadWaivers(path, '--waivers');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).toContain(`--waivers ${path}`);
    expect((thrown as Error).message).not.toMatch(/[\u001b\u202e]/);
  });

  it('refuses a file too large, a link, a directory; and a waiver ending further ahead than --waivers-max-days', () => {
    const big = waiversFile('');
    writeFileSync(big, Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(() => loadWaivers(big, '--waivers')).toThrow(/larger than 4 MiB/);
    const real = waiversFile(good());
    const link = join(tmpDir('svc-waivers-link-'), 'link.yaml');
    symlinkSync(real, link);
    expect(() => loadWaivers(link, '--waivers')).toThrow(/is a symbolic link/);
    const dir = join(tmpDir('svc-waivers-dir-'), 'd');
    mkdirSync(dir);
    expect(() => loadWaivers(dir, '--waivers')).toThrow(UsageError);
    const file = loadWaivers(real, '--waivers');
    const today = Date.parse('2026-11-27T10:00:00Z');
    expect(() => checkWaiverDates(file, 366, today, '--waivers')).not.toThrow();
    expect(() => checkWaiverDates(file, 10, today, '--waivers')).toThrow(
      /line 2: expires 2026-12-15 is more than 10 days ahead/,
    );
    // Through the settings, as the commands read them: before anything else is read.
    const settings = (waiversMaxDays: number) =>
      findingsSettings(
        {
          expiringDays: 30,
          findingsInheritLevels: true,
          waivers: real,
          waiversMaxDays,
          sources: { waivers: 'SVC_WAIVERS' },
        },
        () => today,
      );
    expect(settings(366).waivers?.waivers).toHaveLength(1);
    expect(() => settings(5)).toThrow(/SVC_WAIVERS .*line 2/);
  });

  it('the report over time: JSON carries the sha256 and the lists; the CSV is formula-safe, one row per finding and resolved', async () => {
    const path = waiversFile(good());
    const file = loadWaivers(path, '--waivers');
    const r = await evaluate(site());
    const report = overTime(
      r,
      {
        night: { time: '2026-11-20T02:00:00.000Z', source: 'snapshot' },
        findings: [{ ...r.findings[0]!, id: '00000000-0000-5000-8000-000000000000' }],
      },
      { waivers: file, expiringDays: 30 },
    );
    expect(report.waivers!.sha256).toBe(file.sha256);
    const csv = [...findingsCsvChunks(report)].join('');
    expect(csv.startsWith('\uFEFFid,state,severity,rule,user,')).toBe(true);
    const rows = parseCsv(csv.slice(1));
    expect(rows).toHaveLength(1 + report.findings.length + 1);
    const header = rows[0]!;
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    const ada = rows.find((row) => col(row, 'user') === 'Ada Lovelace')!;
    expect(col(ada, 'project')).toBe("'=Genome");
    expect(col(ada, 'waived_owner')).toBe('alice@example.org');
    expect(col(ada, 'state')).toBe('new');
    expect(col(rows.at(-1)!, 'state')).toBe('resolved');
  });
});
