/**
 * The join the three certification rules share: every member of a project
 * whose security level is known, once per user and project, against each
 * known requirement its project is held to, with the user's best
 * certification for it (one without `expires` first, else the one expiring
 * last). The decisions the spec leaves open (inherited levels, unknown
 * references, every requirement held through a certification) are stated in
 * each rule's meaning (docs/findings.md).
 */
import type { ExportRecord } from '../exports/types.js';
import {
  defineRule,
  keyText,
  ts,
  type FindingDraft,
  type RowRef,
  type RuleContext,
  type RuleDef,
  type RuleInput,
  type SpecCitation,
} from './define.js';

const CERTIFICATION_READS: readonly RuleInput[] = [
  { export: 'projects', columns: ['id', 'name', 'securityLevel', 'parent'] },
  { export: 'project_memberships', columns: ['projectID', 'userID', 'id'] },
  { export: 'security_levels', columns: ['id', 'name', 'requirements'] },
  { export: 'security_requirements', columns: ['id', 'name'] },
  { export: 'user_certifications', columns: ['userID', 'requirementID', 'id', 'expires'] },
];

/** A requirement a project's level holds its members to: what every finding of it shares, made once per project and requirement. */
interface ProjectRequirement {
  readonly requirement: ExportRecord;
  /** The level that requires it. */
  readonly level: ExportRecord;
  /** The project, the ancestor the level is inherited from (if it is), its level and the requirement, as related rows. */
  readonly related: readonly RowRef[];
  /** "member of project "P" (id), whose security level "L" requires "R" (id)", or the ancestor it inherits the level from. */
  readonly text: string;
}

interface RequiredCertification {
  /** The first row of the user and project in key order. */
  readonly membership: ExportRecord;
  readonly userID: string;
  readonly required: ProjectRequirement;
  /** The user's best certification for the requirement; undefined: none. */
  readonly best: ExportRecord | undefined;
}

/**
 * The finding of a required certification: the membership, and the project, level, requirement and
 * certification behind it (made only for a finding: the join has one entry per member and requirement).
 */
function certificationFinding(r: RequiredCertification, detail: string): FindingDraft {
  const m = r.membership;
  const related = r.best
    ? [...r.required.related, ref('user_certifications', r.best.userID, r.best.requirementID, r.best.id)]
    : r.required.related;
  const requirement = keyText(r.required.requirement.id);
  return {
    subject: ref('project_memberships', m.projectID, m.userID, m.id),
    related,
    detail: `user ${r.userID}, ${r.required.text}, ${detail}`,
    part: requirement,
    summary: detail,
    about: { user: r.userID, project: keyText(m.projectID), requirement, level: keyText(r.required.level.id) },
  };
}

export const ref = (exportName: string, ...key: unknown[]): RowRef => ({ export: exportName, key: key.map(keyText) });

/** The string elements of an array column; anything else as none. */
export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function byId(records: readonly ExportRecord[]): Map<string, ExportRecord> {
  const out = new Map<string, ExportRecord>();
  for (const r of records) if (typeof r.id === 'string' && !out.has(r.id)) out.set(r.id, r);
  return out;
}

/** Better: no expiry beats any; a later expiry beats an earlier; the first in key order wins a tie. */
function better(a: ExportRecord, b: ExportRecord): boolean {
  const ea = ts(a.expires);
  const eb = ts(b.expires);
  if (ea === undefined) return eb !== undefined;
  return eb !== undefined && ea > eb;
}

/** A user and project of project_memberships: the first row in key order, and every row of the pair. */
interface MembershipPair {
  readonly first: ExportRecord;
  readonly rows: ExportRecord[];
}

/** The pairs of a records array, made once: every rule reading project_memberships is given the same array (evaluate.ts). */
const pairsOf = new WeakMap<readonly ExportRecord[], readonly MembershipPair[]>();

/** Project memberships once per user and project (an inherited membership, `duplicate`, may be listed beside the direct one). */
export function membershipPairs(records: readonly ExportRecord[]): readonly MembershipPair[] {
  const known = pairsOf.get(records);
  if (known) return known;
  // By project, then user: no joined string key made and hashed for each of the site's memberships.
  const byProject = new Map<string, Map<string, MembershipPair>>();
  const pairs: MembershipPair[] = [];
  for (const m of records) {
    const { projectID, userID } = m;
    if (typeof projectID !== 'string' || typeof userID !== 'string') continue;
    let users = byProject.get(projectID);
    if (!users) byProject.set(projectID, (users = new Map()));
    const pair = users.get(userID);
    if (pair) pair.rows.push(m);
    else {
      const made = { first: m, rows: [m] };
      users.set(userID, made);
      pairs.push(made);
    }
  }
  pairsOf.set(records, pairs);
  return pairs;
}

/** The join, made once for the three rules that share it: the evaluation gives them the same memberships array (and one reading of the levels). */
const joined = new WeakMap<
  readonly ExportRecord[],
  { readonly inherit: boolean; readonly list: readonly RequiredCertification[] }
>();

function requiredCertifications(ctx: RuleContext): readonly RequiredCertification[] {
  const key = ctx.records('project_memberships');
  let out = joined.get(key);
  if (!out || out.inherit !== ctx.inheritLevels)
    joined.set(key, (out = { inherit: ctx.inheritLevels, list: [...joinRequired(ctx)] }));
  return out.list;
}

/** Where a requirement a project is held to comes from: the level, and the project whose own level it is. */
interface Source {
  readonly requirement: ExportRecord;
  readonly level: ExportRecord;
  readonly from: ExportRecord;
}

/** A project's requirements by id, in order (its own first), each once. Never changed once made: merged maps may be shared. */
type Held = ReadonlyMap<string, Source>;

/** `own` first, then what `above` adds (the nearest source of each requirement wins). */
function merge(own: Held, above: Held | undefined): Held {
  if (above === undefined || above.size === 0) return own;
  if (own.size === 0) return above;
  const out = new Map(own);
  for (const [id, source] of above) if (!out.has(id)) out.set(id, source);
  return out;
}

/**
 * Each project's requirements with their sources: its own level's and, when
 * inheriting, what its parent is held to. Made once per project, walking the
 * parent chain without recursion (a hostile chain may be as long as the
 * project list) and stopping where it loops: the projects of a loop are each
 * held to the levels of every project of the loop, from the nearest one on.
 */
function heldResolver(
  projects: ReadonlyMap<string, ExportRecord>,
  ownOf: (p: ExportRecord) => Held,
  inherit: boolean,
): (p: ExportRecord) => Held {
  const memo = new Map<ExportRecord, Held>();
  const parentOf = (p: ExportRecord) => (typeof p.parent === 'string' ? projects.get(p.parent) : undefined);
  // A loop p0 -> p1 -> … -> p0: twice round it backwards, the second time with what the first gathered from beyond each project.
  const resolveLoop = (loop: readonly ExportRecord[]) => {
    let acc: Held | undefined;
    for (let pass = 0; pass < 2; pass++) {
      for (let i = loop.length - 1; i >= 0; i--) {
        acc = merge(ownOf(loop[i]!), acc);
        if (pass === 1) memo.set(loop[i]!, acc);
      }
    }
  };
  return (start) => {
    if (!inherit) return ownOf(start);
    const known = memo.get(start);
    if (known) return known;
    const chain: ExportRecord[] = [];
    const at = new Map<ExportRecord, number>();
    let cur: ExportRecord | undefined = start;
    while (cur !== undefined && !memo.has(cur) && !at.has(cur)) {
      at.set(cur, chain.length);
      chain.push(cur);
      cur = parentOf(cur);
    }
    let end = chain.length;
    if (cur !== undefined && at.has(cur)) {
      end = at.get(cur)!;
      resolveLoop(chain.slice(end));
    }
    let above = cur !== undefined ? memo.get(cur) : undefined;
    for (let i = end - 1; i >= 0; i--) {
      above = merge(ownOf(chain[i]!), above);
      memo.set(chain[i]!, above);
    }
    return memo.get(start)!;
  };
}

function* joinRequired(ctx: RuleContext): Generator<RequiredCertification> {
  const projects = byId(ctx.records('projects'));
  const levels = byId(ctx.records('security_levels'));
  const requirements = byId(ctx.records('security_requirements'));
  // The user's best certification of each requirement, by user and then requirement (no joined key made per certification).
  const best = new Map<string, Map<string, ExportRecord>>();
  for (const c of ctx.records('user_certifications')) {
    const { userID, requirementID } = c;
    if (typeof userID !== 'string' || typeof requirementID !== 'string') continue;
    let held = best.get(userID);
    if (!held) best.set(userID, (held = new Map()));
    const before = held.get(requirementID);
    if (!before || better(c, before)) held.set(requirementID, c);
  }
  // Each project's own known requirements: its level's list without repeats, in order; none without a known level.
  const ownOf = (project: ExportRecord): Held => {
    const level = typeof project.securityLevel === 'string' ? levels.get(project.securityLevel) : undefined;
    const own = new Map<string, Source>();
    for (const reqID of level ? strings(level.requirements) : []) {
      const requirement = requirements.get(reqID);
      if (requirement && level && !own.has(reqID)) own.set(reqID, { requirement, level, from: project });
    }
    return own;
  };
  const heldOf = heldResolver(projects, ownOf, ctx.inheritLevels);
  // What each project's members are held to, as findings name it, made once per project.
  const required = new Map<ExportRecord, readonly ProjectRequirement[]>();
  const requiredOf = (project: ExportRecord): readonly ProjectRequirement[] => {
    let list = required.get(project);
    if (!list) required.set(project, (list = [...heldOf(project).values()].map((s) => projectRequirement(project, s))));
    return list;
  };
  for (const { first } of membershipPairs(ctx.records('project_memberships'))) {
    const project = projects.get(first.projectID as string);
    if (!project) continue;
    const userID = first.userID as string;
    const held = best.get(userID);
    for (const r of requiredOf(project))
      yield { membership: first, userID, required: r, best: held?.get(r.requirement.id as string) };
  }
}

const named = (p: ExportRecord) => `project "${keyText(p.name)}" (${keyText(p.id)})`;

/** A requirement as a project's members are held to it: of its own level, or inherited from the ancestor named. */
function projectRequirement(project: ExportRecord, s: Source): ProjectRequirement {
  const { requirement, level, from } = s;
  const req = `"${keyText(requirement.name)}" (${keyText(requirement.id)})`;
  const kin = typeof project.parent === 'string' && project.parent === from.id ? 'its parent' : 'its ancestor';
  return {
    requirement,
    level,
    related: [
      ref('projects', project.id),
      ...(from === project ? [] : [ref('projects', from.id)]),
      ref('security_levels', level.id),
      ref('security_requirements', requirement.id),
    ],
    text:
      from === project
        ? `member of ${named(project)}, whose security level "${keyText(level.name)}" requires ${req}`
        : `member of ${named(project)}, which inherits from ${kin} ${named(from)} the security level "${keyText(level.name)}", requiring ${req}`,
  };
}

/** The spec line security-reference-unknown rests on too. */
export const LEVEL_REQUIREMENTS_SPEC: SpecCitation = {
  where: 'management-api.md §2 SecurityLevelInfo',
  text: '`requirements` string[] (requirement ids making up the level). `ProjectInfo.securityLevel` holds one of these ids.',
};

const CERTIFICATION_SPEC: readonly SpecCitation[] = [
  {
    where: 'management-api.md §2 ProjectInfo',
    text: '`securityLevel?` string (id of the required security level, if set); `parent?` string (parent project id)',
  },
  LEVEL_REQUIREMENTS_SPEC,
  {
    where: 'management-api.md §2 ProjectMembershipInfo',
    text: '`projectID` string; `userID` string; … `duplicate` boolean (the membership is also inherited); `expires?` ts.',
  },
  {
    where: 'management-api.md §2 UserCertificationInfo',
    text: '`requirementID` (`sreq|<uuid>`); `userID`; `expires?` ts (absent = no expiry)',
  },
  { where: 'management-api.md §2 SecurityRequirementInfo', text: '`type` string (e.g. `UserCert`)' },
];

/** The three certification rules: what they declare alike, and a finding for each required certification `detail` describes. */
export function certificationRule(
  rule: Pick<RuleDef, 'id' | 'severity' | 'description' | 'meaning'> & {
    /** What the finding says of the member's certification, or undefined for no finding. */
    readonly detail: (r: RequiredCertification, ctx: RuleContext) => string | undefined;
  },
): RuleDef {
  return defineRule({
    id: rule.id,
    severity: rule.severity,
    description: rule.description,
    // The decisions the three share follow each rule's own words.
    meaning: `${rule.meaning} ${CERTIFICATION_SCOPE}`,
    spec: CERTIFICATION_SPEC,
    part: 'the requirement id (`security_requirements` `id`)',
    reads: CERTIFICATION_READS,
    *check(ctx) {
      for (const r of requiredCertifications(ctx)) {
        const detail = rule.detail(r, ctx);
        if (detail !== undefined) yield certificationFinding(r, detail);
      }
    },
  });
}

const CERTIFICATION_SCOPE =
  "The spec does not say whether a child project takes its parent's security level; either reading is defensible, " +
  'and `--findings-inherit-levels` (the default, the stricter one: a missed finding costs an auditor more than a question) chooses. ' +
  'Inheriting, a project is held to its own `securityLevel` and to the levels of its ancestors (following ' +
  '`parent`), its own adding to what it inherits; each requirement is counted once per member and project, taken ' +
  'from the nearest project that requires it, and a finding of an inherited requirement names, in its detail and ' +
  'related rows, the parent (or further ancestor) it comes from. ' +
  'A `parent` that projects does not list ends the chain; a chain that loops (hostile or broken data) holds each ' +
  'project of the loop to the levels of every project of it. ' +
  'With `--no-findings-inherit-levels` a project is held to its own `securityLevel` only: a member of a child ' +
  "project without a level is not checked against the parent's, and a child with its own level is checked against " +
  'that one alone. ' +
  'Every requirement is taken as held through a certification, whatever its `type` (the spec names only `UserCert`, as an example). ' +
  'A project naming a level security_levels does not list, and a level naming a requirement security_requirements ' +
  'does not list, are skipped here and reported by `security-reference-unknown`. ' +
  'Only the memberships the API lists are seen: whether inherited memberships are listed is not documented.';
