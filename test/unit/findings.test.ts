/**
 * Each rule of src/findings/rules/ over export records, positive and
 * negative, through the one evaluator (evaluateFindings) a snapshot and
 * `svc-snapshot findings` use; the declarations checked against the export
 * catalog; docs/findings.md current with them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXPORTS, exportsFor } from '../../src/exports/catalog.js';
import { RULES, checkRules } from '../../src/findings/catalog.js';
import { defineRule, type RuleContext, type RuleDef } from '../../src/findings/define.js';
import { readCollection } from '../../src/collect/replay.js';
import { buildAll } from '../../src/exports/build.js';
import { evaluateFindings, findingCounts, type FindingsReport } from '../../src/findings/evaluate.js';
import { serializeFindings } from '../helpers/findings-json.js';
import { formatFindings } from '../../src/findings/format.js';
import { renderFindingsMarkdown } from '../../scripts/docs/findings.js';
import { failOnMessage, findingsSettings } from '../../src/findings/index.js';
import { parseSeverity, type Severity } from '../../src/config/values.js';
import { readOptions } from '../../src/config/options.js';
import { UsageError } from '../../src/errors.js';
import { rec, type Rec } from '../helpers/snapshot-dir.js';

const TIME = '2026-11-21T02:00:00.000Z';
/** The recording whose snapshot shows every rule's positive and negative cases (test/e2e/findings.test.ts). */
const NIGHT3 = fileURLToPath(new URL('../../recordings/platform-3.14.1-night3', import.meta.url));
const NOW = Date.parse(TIME);
const DAY = 86_400_000;

interface RunOptions {
  unavailable?: Record<string, string>;
  /** Export → its reason beside `available: true` (some realms of its route failed). */
  incomplete?: Record<string, string>;
  nullFields?: Array<[string, string]>;
  expiringDays?: number;
  time?: string;
  /** The snapshot was taken with --include vms. */
  vms?: boolean;
  /** --no-findings-inherit-levels: false. */
  inheritLevels?: boolean;
}

function evaluate(records: Record<string, Rec[]>, opts: RunOptions = {}): Promise<FindingsReport> {
  const manifest = {
    time: opts.time ?? TIME,
    exports: (opts.vms ? exportsFor(['vms']) : EXPORTS).map((d) => {
      const reason = opts.unavailable?.[d.name] ?? opts.incomplete?.[d.name];
      return {
        export: d.name,
        available: opts.unavailable?.[d.name] === undefined,
        ...(reason !== undefined ? { reason } : {}),
      };
    }),
    nullFields: (opts.nullFields ?? []).map(([e, f]) => ({ export: e, field: f, reason: 'test: the route failed' })),
  };
  const built = Object.fromEntries(
    Object.entries(records).map(([name, rows]) => [name, rows.map((r) => rec(name, r))]),
  );
  return evaluateFindings(manifest, async (name) => built[name] ?? [], {
    expiringDays: opts.expiringDays ?? 30,
    ...(opts.inheritLevels !== undefined ? { inheritLevels: opts.inheritLevels } : {}),
  });
}

const of = (report: FindingsReport, rule: string) => report.findings.filter((f) => f.rule === rule);
const ruleOf = (report: FindingsReport, rule: string) => report.rules.find((r) => r.id === rule)!;

/** A project P1 with level L1 requiring R1 and R2; P2, a child of P1, without a level; P3 with level L2 requiring R1. */
function securitySite(): Record<string, Rec[]> {
  return {
    projects: [
      { id: 'proj|1', name: 'Clinical', securityLevel: 'slvl|1', parent: null },
      { id: 'proj|2', name: 'Child', securityLevel: null, parent: 'proj|1' },
      { id: 'proj|3', name: 'Own level', securityLevel: 'slvl|2', parent: 'proj|1' },
    ],
    security_levels: [
      { id: 'slvl|1', name: 'Level 1', requirements: ['sreq|1', 'sreq|2'] },
      { id: 'slvl|2', name: 'Level 2', requirements: ['sreq|1'] },
    ],
    security_requirements: [
      { id: 'sreq|1', name: 'Course' },
      { id: 'sreq|2', name: 'NDA' },
    ],
    project_memberships: [],
    user_certifications: [],
  };
}

function member(projectID: string, userID: string, extra: Rec = {}): Rec {
  return { id: `m-${projectID}-${userID}`, projectID, userID, duplicate: false, canManage: false, ...extra };
}

function cert(userID: string, requirementID: string, expires: number | null, id = `c-${userID}-${requirementID}`): Rec {
  return { id, userID, requirementID, expires };
}

describe('the rule declarations', () => {
  it('every rule reads columns the export catalog has, has a one-line description, its meaning and the spec it rests on', () => {
    expect(RULES.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        'certification-missing',
        'certification-expired',
        'certification-expiring',
        'membership-expired',
        'user-expired-with-access',
        'team-ended-with-resources',
        'deleted-owner-holds-resources',
        'quota-exceeded',
      ]),
    );
    for (const r of RULES) {
      expect(r.description).not.toContain('\n');
      expect(r.meaning.length).toBeGreaterThan(40);
      expect(r.spec.length).toBeGreaterThan(0);
    }
    expect(RULES.find((r) => r.id === 'user-expired-with-access')!.meaning).toContain('the VMs were not evaluated');
  });

  it('refuses a rule reading a column or an export the catalog does not have', () => {
    const bad = (reads: Array<{ export: string; columns: string[] }>) =>
      defineRule({ id: 'x', severity: 'low', description: 'x', meaning: 'x', spec: [], reads, *check() {} });
    expect(() => checkRules([bad([{ export: 'teams', columns: ['nope'] }])])).toThrow(/teams\.nope/);
    expect(() => checkRules([bad([{ export: 'vms', columns: ['id'] }])])).toThrow(/export vms/);
  });

  it('refuses a check an export its rule does not declare', async () => {
    const spy = defineRule({
      id: 'spy',
      severity: 'info',
      description: 'x',
      meaning: 'x',
      spec: [],
      reads: [{ export: 'teams', columns: ['id'] }],
      *check(ctx) {
        expect(ctx.records('teams')).toHaveLength(1);
        expect(() => ctx.records('users')).toThrow(/does not declare/);
      },
    });
    const manifest = { time: TIME, exports: EXPORTS.map((d) => ({ export: d.name, available: true })), nullFields: [] };
    await evaluateFindings(manifest, async () => [rec('teams', { id: 't', name: 'n', endDate: 1 })], { rules: [spy] });
  });

  it('every check reads only the columns its rule declares, over the third night built whole (every rule finds something there)', async () => {
    const collection = await readCollection(NIGHT3);
    const built = new Map(
      buildAll(collection, ['vms'])
        .exports.filter((e) => e.available)
        .map((e) => [e.export, e.records]),
    );
    const now = Date.parse(collection.manifest.time);
    /** Each record behind a proxy noting a read of any of its columns the rule does not declare. */
    const undeclaredReads = (rule: RuleDef): { found: number; reads: string[] } => {
      const reads = new Set<string>();
      const watched = (exportName: string, columns: readonly string[]) =>
        built.get(exportName)!.map(
          (r) =>
            new Proxy(r, {
              get(target, prop, receiver) {
                if (typeof prop === 'string' && Object.hasOwn(target, prop) && !columns.includes(prop))
                  reads.add(`${exportName}.${prop}`);
                return Reflect.get(target, prop, receiver) as unknown;
              },
            }),
        );
      const ctx: RuleContext = {
        now,
        expiringDays: 30,
        inheritLevels: true,
        has: (name) => rule.reads.some((r) => r.export === name) && built.has(name),
        records: (name) => watched(name, rule.reads.find((r) => r.export === name)!.columns),
      };
      return { found: [...rule.check(ctx)].length, reads: [...reads] };
    };
    for (const rule of RULES)
      expect({ rule: rule.id, ...undeclaredReads(rule) }).toEqual({
        rule: rule.id,
        found: expect.any(Number),
        reads: [],
      });
    for (const rule of RULES) expect(undeclaredReads(rule).found, rule.id).toBeGreaterThan(0);
    // The watch sees what it is meant to: a rule reading a column it does not declare.
    const sloppy = defineRule({
      id: 'sloppy',
      severity: 'info',
      description: 'x',
      meaning: 'x',
      spec: [],
      reads: [{ export: 'teams', columns: ['id'] }],
      *check(ctx) {
        for (const t of ctx.records('teams'))
          if (t.endDate !== undefined)
            yield { subject: { export: 'teams', key: [String(t.id)] }, related: [], detail: 'x' };
      },
    });
    expect(undeclaredReads(sloppy).reads).toEqual(['teams.endDate']);
  });

  it('docs/findings.md is current with the declarations (regenerate with node --import tsx scripts/gen-docs.ts)', () => {
    const committed = readFileSync(fileURLToPath(new URL('../../docs/findings.md', import.meta.url)), 'utf8');
    expect(committed).toBe(renderFindingsMarkdown());
    for (const r of RULES) expect(committed).toContain(`## ${r.id}\n`);
    expect(committed).toContain("The spec does not say whether a child project takes its parent's security level");
    expect(committed).toContain(
      'With `--no-findings-inherit-levels` a project is held to its own `securityLevel` only',
    );
  });

  it('--fail-on takes the five severities only', () => {
    expect(parseSeverity('High', '--fail-on')).toBe('high');
    expect(() => parseSeverity('urgent', '--fail-on')).toThrow(UsageError);
  });
});

describe('certification rules', () => {
  it('certification-missing: a member without a certification for a required requirement, once per requirement', async () => {
    const site = securitySite();
    site.project_memberships = [member('proj|1', 'u1'), member('proj|1', 'u2')];
    site.user_certifications = [cert('u2', 'sreq|1', null), cert('u2', 'sreq|2', null), cert('u1', 'sreq|1', null)];
    const r = await evaluate(site);
    const missing = of(r, 'certification-missing');
    expect(missing).toHaveLength(1);
    expect(missing[0]!.subject).toEqual({ export: 'project_memberships', key: ['proj|1', 'u1', 'm-proj|1-u1'] });
    expect(missing[0]!.related).toContainEqual({ export: 'security_requirements', key: ['sreq|2'] });
    expect(missing[0]!.detail).toContain('"NDA"');
    expect(ruleOf(r, 'certification-missing')).toEqual({
      id: 'certification-missing',
      severity: 'high',
      evaluated: true,
      count: 1,
    });
  });

  it("--no-findings-inherit-levels: a member of a child project without a level is not checked against the parent's; a child with its own level is checked against it alone", async () => {
    const site = securitySite();
    site.project_memberships = [member('proj|2', 'child-only'), member('proj|3', 'own-level')];
    site.user_certifications = [cert('own-level', 'sreq|1', null)];
    const r = await evaluate(site, { inheritLevels: false });
    expect(of(r, 'certification-missing')).toEqual([]);
    site.user_certifications = [];
    const r2 = await evaluate(site, { inheritLevels: false });
    expect(
      of(r2, 'certification-missing').map((f) => [
        f.subject.key[1],
        f.related.find((x) => x.export === 'security_requirements')!.key[0],
      ]),
    ).toEqual([['own-level', 'sreq|1']]);
  });

  it("inheriting the levels (the default): a child is held to its ancestors' levels, its own adding; each requirement once per member and project, the detail naming the parent it comes from", async () => {
    const site = securitySite();
    site.projects!.push({ id: 'proj|5', name: 'Grandchild', securityLevel: null, parent: 'proj|2' });
    site.project_memberships = [
      member('proj|2', 'child-only'),
      member('proj|3', 'own-level'),
      member('proj|5', 'grand'),
    ];
    site.user_certifications = [cert('own-level', 'sreq|1', null), cert('grand', 'sreq|2', NOW - DAY)];
    const r = await evaluate(site);
    const missing = of(r, 'certification-missing');
    const pairs = (list: typeof missing) =>
      list.map((f) => [
        f.subject.key[0],
        f.subject.key[1],
        f.related.find((x) => x.export === 'security_requirements')!.key[0],
      ]);
    // proj|3 requires R1 itself (held) and inherits R1 (once, its own) and R2 from proj|1.
    expect(pairs(missing)).toEqual([
      ['proj|2', 'child-only', 'sreq|1'],
      ['proj|2', 'child-only', 'sreq|2'],
      ['proj|3', 'own-level', 'sreq|2'],
      ['proj|5', 'grand', 'sreq|1'],
    ]);
    expect(missing[0]!.detail).toBe(
      'user child-only, member of project "Child" (proj|2), which inherits from its parent project "Clinical" (proj|1) the security level "Level 1", requiring "Course" (sreq|1), holds no certification for it',
    );
    expect(missing[0]!.related).toEqual([
      { export: 'projects', key: ['proj|2'] },
      { export: 'projects', key: ['proj|1'] },
      { export: 'security_levels', key: ['slvl|1'] },
      { export: 'security_requirements', key: ['sreq|1'] },
    ]);
    expect(missing[3]!.detail).toContain(
      'member of project "Grandchild" (proj|5), which inherits from its ancestor project "Clinical" (proj|1) the security level "Level 1"',
    );
    // Expired through an inherited level too.
    expect(of(r, 'certification-expired').map((f) => f.detail)).toEqual([
      expect.stringMatching(
        /^user grand, member of project "Grandchild" \(proj\|5\), which inherits from its ancestor project "Clinical" .* requiring "NDA" \(sreq\|2\), holds a certification for it that expired 2026-11-20T02:00:00.000Z$/,
      ),
    ]);
    // A requirement of the project's own level is its own, not inherited, even where an ancestor requires it too.
    const own = await evaluate({ ...site, user_certifications: [] });
    const r1 = of(own, 'certification-missing').find(
      (f) => f.subject.key[0] === 'proj|3' && f.related.some((x) => x.key[0] === 'sreq|1'),
    )!;
    expect(r1.detail).toContain(
      'member of project "Own level" (proj|3), whose security level "Level 2" requires "Course" (sreq|1)',
    );
    expect(r1.related.filter((x) => x.export === 'projects')).toEqual([{ export: 'projects', key: ['proj|3'] }]);
  });

  it('inheriting the levels over hostile parents: a loop, a project its own parent, a parent that is not listed, a chain as long as the project list', async () => {
    const site = securitySite();
    site.projects = [
      { id: 'loop-a', name: 'A', securityLevel: 'slvl|1', parent: 'loop-b' },
      { id: 'loop-b', name: 'B', securityLevel: null, parent: 'loop-c' },
      { id: 'loop-c', name: 'C', securityLevel: 'slvl|2', parent: 'loop-a' },
      { id: 'self', name: 'S', securityLevel: 'slvl|2', parent: 'self' },
      { id: 'orphan', name: 'O', securityLevel: null, parent: 'proj|gone' },
      { id: 'into-loop', name: 'I', securityLevel: null, parent: 'loop-b' },
    ];
    site.project_memberships = ['loop-a', 'loop-b', 'loop-c', 'self', 'orphan', 'into-loop'].map((p) => member(p, 'u'));
    const r = await evaluate(site);
    const by = (project: string) =>
      of(r, 'certification-missing')
        .filter((f) => f.subject.key[0] === project)
        .map(
          (f) =>
            `${f.related.find((x) => x.export === 'security_requirements')!.key[0]} from ${f.related
              .filter((x) => x.export === 'projects')
              .map((x) => x.key[0])
              .join(' ')}`,
        )
        .sort();
    // Each project of the loop is held to every level of the loop, from the nearest project on.
    expect(by('loop-a')).toEqual(['sreq|1 from loop-a', 'sreq|2 from loop-a']);
    expect(by('loop-b')).toEqual(['sreq|1 from loop-b loop-c', 'sreq|2 from loop-b loop-a']);
    expect(by('loop-c')).toEqual(['sreq|1 from loop-c', 'sreq|2 from loop-c loop-a']);
    expect(by('into-loop')).toEqual(['sreq|1 from into-loop loop-c', 'sreq|2 from into-loop loop-a']);
    expect(by('self')).toEqual(['sreq|1 from self']);
    expect(by('orphan')).toEqual([]);
    // The same whichever project is met first.
    const reversed = await evaluate({
      ...site,
      projects: [...site.projects].reverse(),
      project_memberships: [...site.project_memberships!].reverse(),
    });
    expect(serializeFindings(reversed)).toBe(serializeFindings(r));
    // A chain of 100,000 projects, each the parent of the next, the top one with a level: no recursion to overflow.
    const n = 100_000;
    const chain: Rec[] = Array.from({ length: n }, (_, i) => ({
      id: `c${i}`,
      name: `C${i}`,
      securityLevel: i === 0 ? 'slvl|2' : null,
      parent: i === 0 ? null : `c${i - 1}`,
    }));
    const deep = await evaluate({
      ...securitySite(),
      projects: chain,
      project_memberships: [member(`c${n - 1}`, 'deep')],
    });
    expect(of(deep, 'certification-missing').map((f) => f.detail)).toEqual([
      expect.stringContaining(
        `member of project "C${n - 1}" (c${n - 1}), which inherits from its ancestor project "C0" (c0)`,
      ),
    ]);
  });

  it('an inherited membership listed beside the direct one (duplicate) is evaluated once per user and project', async () => {
    const site = securitySite();
    site.project_memberships = [
      member('proj|1', 'u1', { id: 'a' }),
      member('proj|1', 'u1', { id: 'b', duplicate: true }),
    ];
    const r = await evaluate(site);
    expect(of(r, 'certification-missing')).toHaveLength(2); // R1 and R2, not four
    expect(of(r, 'certification-missing').every((f) => f.subject.key[2] === 'a')).toBe(true);
  });

  it("certification-expired / -expiring: before the snapshot's time is expired; later the same day is expiring; no expires never expires; the best certification counts", async () => {
    const site = securitySite();
    site.project_memberships = [
      member('proj|3', 'old'),
      member('proj|3', 'today'),
      member('proj|3', 'never'),
      member('proj|3', 'renewed'),
      member('proj|3', 'far'),
      member('proj|3', 'exact'),
    ];
    site.user_certifications = [
      cert('old', 'sreq|1', NOW - DAY),
      cert('today', 'sreq|1', NOW + 3_600_000),
      cert('never', 'sreq|1', null),
      cert('renewed', 'sreq|1', NOW - 100 * DAY, 'c1'),
      cert('renewed', 'sreq|1', NOW + 300 * DAY, 'c2'),
      cert('far', 'sreq|1', NOW + 31 * DAY),
      cert('exact', 'sreq|1', NOW),
    ];
    // proj|3's own level alone: what it inherits from proj|1 is the inheritance tests' matter.
    const r = await evaluate(site, { inheritLevels: false });
    expect(of(r, 'certification-expired').map((f) => f.subject.key[1])).toEqual(['old']);
    expect(of(r, 'certification-expired')[0]!.detail).toContain('expired 2026-11-20T02:00:00.000Z');
    expect(of(r, 'certification-expiring').map((f) => f.subject.key[1])).toEqual(['exact', 'today']);
    expect(of(r, 'certification-missing')).toEqual([]);
    const wider = await evaluate(site, { expiringDays: 31, inheritLevels: false });
    expect(of(wider, 'certification-expiring').map((f) => f.subject.key[1])).toEqual(['exact', 'far', 'today']);
  });

  it('a level naming a requirement that does not exist, and a project naming a level that does not exist: skipped by the certification rules, reported by security-reference-unknown', async () => {
    const site = securitySite();
    site.security_levels = [{ id: 'slvl|1', name: 'Level 1', requirements: ['sreq|1', 'sreq|ghost', 'sreq|ghost'] }];
    site.projects!.push({ id: 'proj|4', name: 'Dangling', securityLevel: 'slvl|ghost', parent: null });
    site.project_memberships = [member('proj|1', 'u1'), member('proj|4', 'u1')];
    const r = await evaluate(site);
    expect(
      of(r, 'certification-missing').map((f) => f.related.find((x) => x.export === 'security_requirements')!.key[0]),
    ).toEqual(['sreq|1']);
    expect(of(r, 'security-reference-unknown').map((f) => f.subject)).toEqual([
      { export: 'projects', key: ['proj|3'] },
      { export: 'projects', key: ['proj|4'] },
      { export: 'security_levels', key: ['slvl|1'] },
    ]);
  });

  it('a level whose requirements are not a list (exported as null) is no crash', async () => {
    const site = securitySite();
    site.security_levels = [
      { id: 'slvl|1', name: 'Level 1', requirements: null },
      { id: 'slvl|2', name: 'L2', requirements: ['sreq|1', 7] },
    ];
    site.project_memberships = [member('proj|1', 'u1'), member('proj|3', 'u1')];
    const r = await evaluate(site);
    expect(of(r, 'certification-missing').map((f) => f.subject.key[0])).toEqual(['proj|3']);
  });
});

describe('membership and user rules', () => {
  it('membership-expired: every row of the pair expired; a pair with a row still valid or without expiry is not', async () => {
    const r = await evaluate({
      project_memberships: [
        member('p', 'gone', { expires: NOW - 1 }),
        member('p', 'kept', { id: 'k1', expires: NOW - DAY }),
        member('p', 'kept', { id: 'k2', expires: null, duplicate: true }),
        member('p', 'later', { expires: NOW + 1 }),
        member('p', 'open', { expires: null }),
      ],
    });
    expect(of(r, 'membership-expired').map((f) => f.subject.key)).toEqual([['p', 'gone', 'm-p-gone']]);
    expect(of(r, 'membership-expired')[0]!.detail).not.toContain('duplicate');
  });

  it('membership-expired: the detail names the row marked duplicate, which need not be the subject', async () => {
    const r = await evaluate({
      project_memberships: [
        // The subject is the first row in key order ('a'); the duplicate is the second.
        member('p', 'u1', { id: 'a', expires: NOW - DAY }),
        member('p', 'u1', { id: 'b', expires: NOW - 2 * DAY, duplicate: true }),
        member('p', 'u2', { id: 'c', expires: NOW - DAY, duplicate: true }),
      ],
    });
    const [u1, u2] = of(r, 'membership-expired');
    expect(u1!.subject.key).toEqual(['p', 'u1', 'a']);
    expect(u1!.detail).toBe(
      'user u1 is still listed as a member of project p, a membership that expired 2026-11-20T02:00:00.000Z; marked duplicate (the membership is also inherited, so the user may keep access through a parent project): row b',
    );
    expect(u1!.related).toEqual([
      { export: 'projects', key: ['p'] },
      { export: 'project_memberships', key: ['p', 'u1', 'b'] },
    ]);
    expect(u2!.detail).toMatch(/: row c \(this one\)$/);
    expect(u2!.related).toEqual([{ export: 'projects', key: ['p'] }]);
  });

  it('user-expired-with-access: expired or deactivated users who are still members; a deactivation that ended, or a lapsed user who is a member of nothing, is not', async () => {
    const r = await evaluate({
      user_profiles: [
        { id: 'expired', expiration: NOW - 1 },
        { id: 'deactivated', deactivationType: 'Admin' },
        { id: 'until-later', deactivationType: 'Timeout', deactivatedUntil: NOW + DAY },
        { id: 'until-passed', deactivationType: 'Timeout', deactivatedUntil: NOW - DAY },
        { id: 'active', expiration: NOW + DAY },
        { id: 'lapsed-alone', deactivationType: 'XSS' },
      ],
      team_memberships: [
        { teamID: 't1', memberID: 'deactivated' },
        { teamID: 't1', memberID: 'until-passed' },
        { teamID: 't1', memberID: 'active' },
        { teamID: 't2', memberID: 'until-later' },
      ],
      project_memberships: [
        member('p', 'expired'),
        member('p', 'expired', { id: 'dup', duplicate: true }),
        member('p', 'deactivated'),
      ],
    });
    const found = of(r, 'user-expired-with-access');
    expect(found.map((f) => f.subject.key[0])).toEqual(['deactivated', 'expired', 'until-later']);
    expect(found.find((f) => f.subject.key[0] === 'expired')!.related).toEqual([
      { export: 'project_memberships', key: ['p', 'expired', 'm-p-expired'] },
    ]);
    expect(found.find((f) => f.subject.key[0] === 'deactivated')!.detail).toContain(
      'still a member of 1 team(s) and 1 project(s)',
    );
    // Without --include vms the rule is evaluated over the memberships, and says the VMs were not.
    expect(ruleOf(r, 'user-expired-with-access')).toMatchObject({
      evaluated: true,
      count: 3,
      reason:
        'the running VMs (active_vms) not evaluated: the snapshot has no active_vms export (it is written with --include vms)',
    });
  });

  it('user-expired-with-access: a VM listed with active false (or null) is no access; said in the detail of a user reported for other access', async () => {
    const profiles = [
      { id: 'only-inactive', deactivationType: 'Admin' },
      { id: 'member', expiration: NOW - DAY },
      { id: 'authed-inactive', deactivationType: 'Admin' },
    ];
    const vms = [
      {
        realmID: 'r1',
        id: 'off',
        owner: 'only-inactive',
        ownerType: 'User',
        authedUsers: ['authed-inactive'],
        active: false,
      },
      { realmID: 'r1', id: 'unknown', owner: 'member', ownerType: 'User', authedUsers: [], active: null },
      { realmID: 'r2', id: 'on', owner: 'someone', ownerType: 'User', authedUsers: ['member'], active: true },
    ];
    const r = await evaluate(
      {
        user_profiles: profiles,
        team_memberships: [{ teamID: 't', memberID: 'member' }],
        project_memberships: [],
        active_vms: vms,
      },
      { vms: true },
    );
    const found = of(r, 'user-expired-with-access');
    expect(found.map((f) => f.subject.key[0])).toEqual(['member']);
    expect(found[0]!.detail).toBe(
      'user member: account expired 2026-11-20T02:00:00.000Z, still a member of 1 team(s) and 0 project(s), owns 0 running VM(s) and is authorized on 1 other(s) (not counted: owns 1 and is authorized on 0 VM(s) listed as running with `active` not true)',
    );
    expect(found[0]!.related).toEqual([
      { export: 'team_memberships', key: ['t', 'member'] },
      { export: 'active_vms', key: ['r2', 'on'] },
      { export: 'active_vms', key: ['r1', 'unknown'] },
    ]);
    // The same VM active: its owner and authorized user are reported.
    const on = await evaluate(
      {
        user_profiles: profiles,
        team_memberships: [],
        project_memberships: [],
        active_vms: vms.map((v) => ({ ...v, active: true })),
      },
      { vms: true },
    );
    expect(of(on, 'user-expired-with-access').map((f) => f.subject.key[0])).toEqual([
      'authed-inactive',
      'member',
      'only-inactive',
    ]);
  });

  it('user-expired-with-access with --include vms: a lapsed user who owns a running VM or is among its authedUsers, a member of nothing; a VM owned by a VM, an active user, are not', async () => {
    const profiles = [
      { id: 'owner', deactivationType: 'Admin' },
      { id: 'authed', expiration: NOW - DAY },
      { id: 'vm-1', deactivationType: 'Admin' },
      { id: 'active' },
      { id: 'idle', deactivationType: 'XSS' },
    ];
    const vms = [
      {
        realmID: 'r1',
        id: 'vm-1',
        owner: 'owner',
        ownerType: 'User',
        authedUsers: ['authed', 'active', 'authed'],
        active: true,
      },
      { realmID: 'r1', id: 'vm-2', owner: 'vm-1', ownerType: 'VM', authedUsers: [], active: true },
      { realmID: 'r2', id: 'vm-3', owner: 'active', authedUsers: null, active: true },
    ];
    const r = await evaluate(
      {
        user_profiles: profiles,
        team_memberships: [{ teamID: 't', memberID: 'owner' }],
        project_memberships: [],
        active_vms: vms,
      },
      { vms: true },
    );
    const found = of(r, 'user-expired-with-access');
    expect(found.map((f) => f.subject.key[0])).toEqual(['authed', 'owner']);
    const owner = found.find((f) => f.subject.key[0] === 'owner')!;
    expect(owner.related).toEqual([
      { export: 'team_memberships', key: ['t', 'owner'] },
      { export: 'active_vms', key: ['r1', 'vm-1'] },
    ]);
    expect(owner.detail).toBe(
      'user owner: deactivated (Admin), still a member of 1 team(s) and 0 project(s), owns 1 running VM(s) and is authorized on 0 other(s)',
    );
    expect(found.find((f) => f.subject.key[0] === 'authed')!.related).toEqual([
      { export: 'active_vms', key: ['r1', 'vm-1'] },
    ]);
    expect(ruleOf(r, 'user-expired-with-access')).toEqual({
      id: 'user-expired-with-access',
      severity: 'high',
      evaluated: true,
      count: 2,
    });
    // active_vms taken, but its authedUsers column null in this snapshot: asked for and not read whole, so the rule is not evaluated (fewer findings would look like a full check).
    const nulled = await evaluate(
      { user_profiles: profiles, team_memberships: [{ teamID: 't', memberID: 'owner' }], active_vms: vms },
      { vms: true, nullFields: [['active_vms', 'authedUsers']] },
    );
    expect(of(nulled, 'user-expired-with-access')).toEqual([]);
    expect(ruleOf(nulled, 'user-expired-with-access')).toEqual({
      id: 'user-expired-with-access',
      severity: 'high',
      evaluated: false,
      count: null,
      reason: 'active_vms.authedUsers is null in this snapshot: test: the route failed',
    });
    // Taken, but one realm's route failed (published with --allow-partial): incomplete, so not evaluated either.
    const partial = await evaluate(
      { user_profiles: profiles, team_memberships: [{ teamID: 't', memberID: 'owner' }], active_vms: vms },
      { vms: true, incomplete: { active_vms: 'incomplete: GET /api/vms/r2/active failed: HTTP 503' } },
    );
    expect(ruleOf(partial, 'user-expired-with-access')).toEqual({
      id: 'user-expired-with-access',
      severity: 'high',
      evaluated: false,
      count: null,
      reason: 'active_vms is incomplete: GET /api/vms/r2/active failed: HTTP 503',
    });
  });
});

describe('team rules', () => {
  const teams: Rec[] = [
    { id: 'over-mem', name: 'A', teamQuotas_memory: 100, usage_vms_mem: 101, usage_vms_cores: 4 },
    { id: 'at-mem', name: 'B', teamQuotas_memory: 100, usage_vms_mem: 100 },
    { id: 'over-both', name: 'C', teamQuotas_cores: 8, teamQuotas_memory: 1, usage_vms_cores: 9, usage_vms_mem: 2 },
    { id: 'no-quota', name: 'D', usage_vms_cores: 1000, usage_vms_mem: 1e15 },
    { id: 'ended', name: 'E', endDate: NOW - 1, usage_vms_cnt: 0, usage_drives_cnt: 2 },
    { id: 'ended-empty', name: 'F', endDate: NOW - 1, usage_vms_cnt: 0, usage_drives_cnt: 0 },
    { id: 'ends-later', name: 'G', endDate: NOW + 1, usage_vms_cnt: 3, usage_drives_cnt: 3 },
    {
      id: 'ended-files',
      name: 'H',
      endDate: NOW - 1,
      usage_vms_cnt: 0,
      usage_drives_cnt: 0,
      usage_files_cnt: 4471,
      usage_files_size: 1714421760,
    },
    {
      id: 'ended-no-files',
      name: 'I',
      endDate: NOW - 1,
      usage_vms_cnt: 0,
      usage_drives_cnt: 0,
      usage_files_cnt: 0,
      usage_files_size: 0,
    },
  ];

  it('quota-exceeded: usage above the cores or memory quota, one finding per quota; at the quota or without one is not', async () => {
    const r = await evaluate({ teams });
    expect(of(r, 'quota-exceeded').map((f) => [f.subject.key[0], /cores/.test(f.detail) ? 'cores' : 'memory'])).toEqual(
      [
        ['over-both', 'memory'], // same subject: ordered by the detail ("uses 2 bytes" before "uses 9 cores")
        ['over-both', 'cores'],
        ['over-mem', 'memory'],
      ],
    );
  });

  it('quota-exceeded: the legacy quotas map where teamQuotas sets no such limit, saying which one it used', async () => {
    const legacy: Rec[] = [
      {
        id: 'legacy-cores',
        name: 'L',
        quotas: ['cores=26', 'memory=191126044672'],
        usage_vms_cores: 32,
        usage_vms_mem: 8589934592,
      },
      // teamQuotas sets the limit: the legacy entry below the usage is not read.
      {
        id: 'typed-wins',
        name: 'T',
        quotas: ['cores=1', 'memory=1'],
        teamQuotas_cores: 40,
        teamQuotas_memory: 100,
        usage_vms_cores: 32,
        usage_vms_mem: 100,
      },
      // Not numbers, or another key: no limit.
      {
        id: 'junk',
        name: 'J',
        quotas: ['cores=many', 'memory=', 'corestotal=1', 7],
        usage_vms_cores: 32,
        usage_vms_mem: 5,
      },
      { id: 'legacy-mem', name: 'M', quotas: ['memory=4'], usage_vms_cores: 0, usage_vms_mem: 5 },
      { id: 'no-map', name: 'N', quotas: null, usage_vms_cores: 32 },
    ];
    const r = await evaluate({ teams: legacy });
    expect(of(r, 'quota-exceeded').map((f) => f.detail)).toEqual([
      'team "L" (legacy-cores) uses 32 cores, above its legacy quota of 26 (quotas.cores; teamQuotas sets no cores limit)',
      'team "M" (legacy-mem) uses 5 bytes of memory, above its legacy quota of 4 (quotas.memory; teamQuotas sets no memory limit)',
    ]);
    const typed = await evaluate({
      teams: [{ id: 't', name: 'T', quotas: ['cores=100'], teamQuotas_cores: 8, usage_vms_cores: 9 }],
    });
    expect(of(typed, 'quota-exceeded').map((f) => f.detail)).toEqual([
      'team "T" (t) uses 9 cores, above its team quota of 8 (teamQuotas.cores)',
    ]);
  });

  it('team-ended-with-resources: an ended team still holding VMs, drives or vault files', async () => {
    const r = await evaluate({ teams });
    expect(of(r, 'team-ended-with-resources').map((f) => f.subject.key[0])).toEqual(['ended', 'ended-files']);
    expect(of(r, 'team-ended-with-resources')[1]!.detail).toBe(
      'team "H" (ended-files) ended 2026-11-21T01:59:59.999Z and still holds 0 VM(s), 0 drive(s) and 4471 vault file(s) (1714421760 bytes)',
    );
  });

  it('not evaluated when the usage columns are null in the snapshot (team usage not read): never zero findings', async () => {
    const r = await evaluate(
      { teams },
      {
        nullFields: [
          ['teams', 'usage_vms_cores'],
          ['teams', 'usage_vms_mem'],
          ['teams', 'usage_vms_cnt'],
          ['teams', 'usage_drives_cnt'],
          ['teams', 'usage_files_cnt'],
        ],
      },
    );
    for (const id of ['quota-exceeded', 'team-ended-with-resources']) {
      expect(ruleOf(r, id).evaluated).toBe(false);
      expect(ruleOf(r, id).count).toBeNull();
      expect(ruleOf(r, id).reason).toMatch(/^teams\.usage_vms_\w+ is null in this snapshot: test: the route failed$/);
      expect(of(r, id)).toEqual([]);
    }
  });
});

describe('deleted-owner-holds-resources', () => {
  it('a deleted project (exists false) still holding VMs, drives or vault files; an existing one, one holding nothing, and an exists that is not a boolean are not', async () => {
    const usage = (projectID: string, exists: unknown, vms: number, drives: number, files: number): Rec => ({
      projectID,
      exists,
      vms_cnt: vms,
      drives_cnt: drives,
      files_cnt: files,
      files_size: files * 10,
    });
    const r = await evaluate({
      resources_by_project: [
        usage('proj|drives', false, 0, 3, 0),
        usage('proj|vms', false, 1, 0, 0),
        usage('proj|files', false, 0, 0, 7),
        usage('proj|empty', false, 0, 0, 0),
        usage('proj|alive', true, 5, 5, 5),
        usage('proj|unknown', null, 5, 5, 5),
        usage('no-project', true, 1, 6, 0),
      ],
    });
    const found = of(r, 'deleted-owner-holds-resources');
    expect(found.map((f) => f.subject)).toEqual(
      ['proj|drives', 'proj|files', 'proj|vms'].map((id) => ({ export: 'resources_by_project', key: [id] })),
    );
    expect(found[0]!.detail).toBe(
      'deleted project proj|drives (exists: false) still holds 0 VM(s), 3 drive(s) and 0 vault file(s) (0 bytes)',
    );
    // Evaluated, saying every time that deleted teams are in no export.
    expect(ruleOf(r, 'deleted-owner-holds-resources')).toEqual({
      id: 'deleted-owner-holds-resources',
      severity: 'medium',
      evaluated: true,
      count: 3,
      reason: expect.stringMatching(/^deleted teams not evaluated: the usage rows of deleted teams are in no export/),
    });
    // Not evaluated when the project usage could not be read, the route named.
    const missing = await evaluate(
      {},
      { unavailable: { resources_by_project: 'GET /api/projects/usage failed: HTTP 503' } },
    );
    expect(ruleOf(missing, 'deleted-owner-holds-resources')).toEqual({
      id: 'deleted-owner-holds-resources',
      severity: 'medium',
      evaluated: false,
      count: null,
      reason: 'resources_by_project is unavailable: GET /api/projects/usage failed: HTTP 503',
    });
  });
});

describe('the report', () => {
  it("an unavailable export makes every rule reading it not evaluated, with the manifest's reason", async () => {
    const r = await evaluate(securitySite(), {
      unavailable: { project_memberships: 'GET /api/projects/memberships failed: 500' },
    });
    for (const id of [
      'certification-missing',
      'certification-expired',
      'certification-expiring',
      'membership-expired',
      'user-expired-with-access',
    ]) {
      expect(ruleOf(r, id)).toEqual({
        id,
        severity: ruleOf(r, id).severity,
        evaluated: false,
        reason: 'project_memberships is unavailable: GET /api/projects/memberships failed: 500',
        count: null,
      });
    }
    expect(ruleOf(r, 'quota-exceeded').evaluated).toBe(true);
    expect(serializeFindings(r)).toContain('"count":null');
    expect(findingCounts(r).map((c) => c.rule)).not.toContain('membership-expired');
  });

  it("sorted by severity, rule and key, in the same bytes whatever the order of the records; the time is the manifest's", async () => {
    const site = securitySite();
    site.project_memberships = [member('proj|1', 'b'), member('proj|1', 'a'), member('p', 'z', { expires: 1 })];
    const one = serializeFindings(await evaluate(site));
    site.project_memberships.reverse();
    expect(serializeFindings(await evaluate(site))).toBe(one);
    const parsed = JSON.parse(one) as {
      time: string;
      findings: Array<{ rule: string; severity: string }>;
      rules: Array<{ id: string }>;
    };
    expect(parsed.time).toBe(TIME);
    expect(parsed.findings.map((f) => f.rule)).toEqual([
      'certification-missing',
      'certification-missing',
      'certification-missing',
      'certification-missing',
      'membership-expired',
    ]);
    expect(Object.keys(parsed)).toEqual(['time', 'counts', 'rules', 'findings']);
  });

  it('a report of thousands of findings, written a chunk at a time, is one line per finding, in order, and parses back to the findings', async () => {
    const site = securitySite();
    site.project_memberships = Array.from({ length: 2600 }, (_, i) =>
      member('proj|1', `user-${String(i).padStart(5, '0')} "é"\n`),
    );
    const r = await evaluate(site);
    expect(r.findings.length).toBe(5200);
    const text = serializeFindings(r);
    const lines = text.split('\n');
    const first = lines.indexOf('  "findings": [');
    const findingLines = lines.slice(first + 1, first + 1 + r.findings.length);
    expect(lines.slice(first + 1 + r.findings.length)).toEqual(['  ]', '}', '']);
    findingLines.forEach((line, i) => {
      expect(line.startsWith('    {')).toBe(true);
      const body = i < findingLines.length - 1 ? line.slice(4, -1) : line.slice(4);
      if (i < findingLines.length - 1) expect(line.endsWith('},')).toBe(true);
      expect(JSON.parse(body)).toEqual({
        id: r.findings[i]!.id,
        rule: r.findings[i]!.rule,
        severity: r.findings[i]!.severity,
        subject: r.findings[i]!.subject,
        related: r.findings[i]!.related,
        detail: r.findings[i]!.detail,
        display: r.findings[i]!.display,
      });
    });
  });

  it('a manifest whose time is not a date is refused, not compared with', async () => {
    await expect(evaluate({}, { time: 'yesterday' })).rejects.toThrow(/is not a date/);
  });

  it('hostile ids and names: exact in the JSON, escaped on the terminal', async () => {
    const id = 'proj|\u001b[2J\u202eevil';
    const site = securitySite();
    site.projects!.push({ id, name: 'x\u0007\r\nname', securityLevel: 'slvl|1', parent: null });
    site.project_memberships = [member(id, 'user\u001b]0;t\u0007')];
    site.user_certifications = [cert('user\u001b]0;t\u0007', 'sreq|1', null)];
    const r = await evaluate(site);
    const json = JSON.parse(serializeFindings(r)) as {
      findings: Array<{ subject: { key: string[] }; detail: string }>;
    };
    expect(json.findings[0]!.subject.key.slice(0, 2)).toEqual([id, 'user\u001b]0;t\u0007']);
    expect(json.findings[0]!.detail).toContain('"x\u0007\r\nname"');
    const text = formatFindings(r, '/tmp/x');
    expect(text).not.toMatch(/[\u0007\u001b\u202e\r]/);
    // The ids are in the JSON; the text names the project, escaped.
    expect(text).not.toContain('evil');
    expect(text).toContain('project x\\u0007\\u000d\\u000aname');
    expect(text.split('\n').filter((l) => l.includes('name')).length).toBe(1);
  });

  it('--fail-on: a finding of that severity or higher', async () => {
    const r = await evaluate({ teams: [{ id: 't', name: 'T', teamQuotas_cores: 1, usage_vms_cores: 2 }] });
    const on = (severity: Severity | undefined) => failOnMessage(r, { severity, unevaluated: true });
    expect(on('medium')).toBe('--fail-on medium: 1 finding(s) of severity medium or higher (exit 6)');
    expect(on('low')).toBe('--fail-on low: 1 finding(s) of severity low or higher (exit 6)');
    expect(on('high')).toBeUndefined();
    expect(on(undefined)).toBeUndefined();
  });

  it('--fail-on fails closed: a rule of that severity or higher not evaluated fails it too, named with its reason, unless --fail-on-unevaluated=false', async () => {
    // No finding at all; the high rules reading project_memberships could not look.
    const r = await evaluate(
      {},
      { unavailable: { project_memberships: 'GET /api/projects/memberships failed: HTTP 503' } },
    );
    expect(r.findings).toEqual([]);
    const high = failOnMessage(r, { severity: 'high', unevaluated: true })!;
    expect(high).toMatch(/^--fail-on high: 3 rule\(s\) of severity high or higher not evaluated, so not checked: /);
    expect(high).toContain(
      'certification-missing (project_memberships is unavailable: GET /api/projects/memberships failed: HTTP 503)',
    );
    expect(high).toContain('user-expired-with-access (project_memberships is unavailable');
    expect(high).not.toContain('membership-expired');
    expect(high).toMatch(/--fail-on-unevaluated=false fails on findings alone \(exit 6\)$/);
    // Five rules named, the rest counted.
    const many = await evaluate({}, { unavailable: { project_memberships: 'x', teams: 'y' } });
    const info = failOnMessage(many, { severity: 'info', unevaluated: true })!;
    expect(info).toMatch(
      /^--fail-on info: 7 rule\(s\) of severity info or higher not evaluated, so not checked: (\S+ \([^)]*\); ){4}\S+ \([^)]*\), and 2 more; --fail-on-unevaluated=false/,
    );
    expect(failOnMessage(r, { severity: 'critical', unevaluated: true })).toBeUndefined();
    expect(failOnMessage(r, { severity: 'info', unevaluated: false })).toBeUndefined();
    // Both at once: the findings first.
    const both = await evaluate(
      { teams: [{ id: 't', name: 'T', teamQuotas_cores: 1, usage_vms_cores: 2 }] },
      { unavailable: { project_memberships: 'x' } },
    );
    const bothText = failOnMessage(both, { severity: 'medium', unevaluated: true })!;
    expect(bothText).toMatch(
      /^--fail-on medium: 1 finding\(s\) of severity medium or higher; and 5 rule\(s\) of severity medium or higher not evaluated, so not checked: /,
    );
    expect(bothText).not.toContain('more');
  });

  it('--fail-on-unevaluated: true or false, given with --fail-on', () => {
    const settings = (flags: Record<string, string>) => findingsSettings(readOptions('findings', flags, {}));
    expect(settings({ failOn: 'high' }).failOn).toEqual({ severity: 'high', unevaluated: true });
    expect(settings({ failOn: 'high', failOnUnevaluated: 'false' }).failOn).toEqual({
      severity: 'high',
      unevaluated: false,
    });
    expect(settings({ failOn: 'high', failOnUnevaluated: 'TRUE' }).failOn).toEqual({
      severity: 'high',
      unevaluated: true,
    });
    expect(() => settings({ failOn: 'high', failOnUnevaluated: 'no' })).toThrow(
      /--fail-on-unevaluated must be true or false \(--fail-on-unevaluated=false\); got "no"/,
    );
    expect(() => settings({ failOnUnevaluated: 'false' })).toThrow(
      /--fail-on-unevaluated changes what --fail-on <severity> fails on; give --fail-on too/,
    );
  });
});
