/**
 * The join the three certification rules share: every member of a project
 * whose own security level is known, once per user and project, against each
 * known requirement of that level, with the user's best certification for it
 * (one without `expires` first, else the one expiring last).
 *
 * Decisions the spec leaves open, stated in each rule's meaning:
 * - a project's level is its own `securityLevel` only: a child project does
 *   not take its parent's (the spec says nothing of inheriting a level);
 * - a level naming a requirement that security_requirements does not list,
 *   and a project naming a level that security_levels does not list, are
 *   skipped here and reported by `security-reference-unknown`;
 * - every requirement is taken as held through a certification
 *   (`UserCertificationInfo.requirementID`), whatever its `type`.
 */
import type { ExportRecord } from '../exports/types.js';
import { keyText, ts, type FindingDraft, type RowRef, type RuleContext, type RuleInput, type SpecCitation } from './define.js';

export const CERTIFICATION_READS: readonly RuleInput[] = [
  { export: 'projects', columns: ['id', 'name', 'securityLevel'] },
  { export: 'project_memberships', columns: ['projectID', 'userID', 'id'] },
  { export: 'security_levels', columns: ['id', 'name', 'requirements'] },
  { export: 'security_requirements', columns: ['id', 'name'] },
  { export: 'user_certifications', columns: ['userID', 'requirementID', 'id', 'expires'] },
];

/** A requirement a project's level holds its members to: what every finding of it shares, made once per project and requirement. */
interface ProjectRequirement {
  readonly requirement: ExportRecord;
  /** The project, its level and the requirement, as related rows. */
  readonly related: readonly RowRef[];
  /** "member of project "P" (id), whose security level "L" requires "R" (id)". */
  readonly text: string;
}

export interface RequiredCertification {
  /** The first row of the user and project in key order. */
  readonly membership: ExportRecord;
  readonly userID: string;
  readonly required: ProjectRequirement;
  /** The user's best certification for the requirement; undefined: none. */
  readonly best: ExportRecord | undefined;
}

/** The finding of a required certification: the membership, and the project, level, requirement and certification behind it (made only for a finding: the join has one entry per member and requirement). */
export function certificationFinding(r: RequiredCertification, detail: string): FindingDraft {
  const m = r.membership;
  const related = r.best ? [...r.required.related, ref('user_certifications', r.best.userID, r.best.requirementID, r.best.id)] : r.required.related;
  return { subject: ref('project_memberships', m.projectID, m.userID, m.id), related, detail: `user ${r.userID}, ${r.required.text}, ${detail}` };
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

/**
 * Project memberships once per user and project (an inherited membership,
 * `duplicate`, may be listed beside the direct one): the first row in key
 * order, and every row of the pair.
 */
export function membershipPairs(records: readonly ExportRecord[]): ReadonlyArray<{ first: ExportRecord; rows: ExportRecord[] }> {
  let out = pairsOf.get(records);
  if (out) return out;
  // By project, then user: no joined string key made and hashed for each of the site's memberships.
  const byProject = new Map<string, Map<string, { first: ExportRecord; rows: ExportRecord[] }>>();
  const pairs: Array<{ first: ExportRecord; rows: ExportRecord[] }> = [];
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
  pairsOf.set(records, (out = pairs));
  return out;
}

/** The pairs of a records array, made once: every rule reading project_memberships is given the same array (evaluate.ts). */
const pairsOf = new WeakMap<readonly ExportRecord[], ReadonlyArray<{ first: ExportRecord; rows: ExportRecord[] }>>();

/** The join, made once for the three rules that share it: the evaluation gives them the same memberships array. */
const joined = new WeakMap<readonly ExportRecord[], readonly RequiredCertification[]>();

export function requiredCertifications(ctx: RuleContext): readonly RequiredCertification[] {
  const key = ctx.records('project_memberships');
  let out = joined.get(key);
  if (!out) joined.set(key, (out = [...joinRequired(ctx)]));
  return out;
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
  // Each project's known requirements, once per project: its level's list without repeats, in order; none without a known level.
  const required = new Map<ExportRecord, readonly ProjectRequirement[]>();
  const requiredOf = (project: ExportRecord): readonly ProjectRequirement[] => {
    let list = required.get(project);
    if (!list) {
      const level = typeof project.securityLevel === 'string' ? levels.get(project.securityLevel) : undefined;
      const made: ProjectRequirement[] = [];
      for (const reqID of level ? new Set(strings(level.requirements)) : []) {
        const requirement = requirements.get(reqID);
        if (!requirement || !level) continue;
        made.push({
          requirement,
          related: [ref('projects', project.id), ref('security_levels', level.id), ref('security_requirements', requirement.id)],
          text: `member of project "${keyText(project.name)}" (${keyText(project.id)}), whose security level "${keyText(level.name)}" requires "${keyText(requirement.name)}" (${keyText(requirement.id)})`,
        });
      }
      required.set(project, (list = made));
    }
    return list;
  };
  for (const { first } of membershipPairs(ctx.records('project_memberships'))) {
    const project = projects.get(first.projectID as string);
    if (!project) continue;
    const userID = first.userID as string;
    const held = best.get(userID);
    for (const r of requiredOf(project)) yield { membership: first, userID, required: r, best: held?.get(r.requirement.id as string) };
  }
}

export const CERTIFICATION_SPEC: readonly SpecCitation[] = [
  { where: 'management-api.md §2 ProjectInfo', text: '`securityLevel?` string (id of the required security level, if set); `parent?` string (parent project id)' },
  { where: 'management-api.md §2 SecurityLevelInfo', text: '`requirements` string[] (requirement ids making up the level). `ProjectInfo.securityLevel` holds one of these ids.' },
  { where: 'management-api.md §2 ProjectMembershipInfo', text: '`projectID` string; `userID` string; … `duplicate` boolean (the membership is also inherited); `expires?` ts.' },
  { where: 'management-api.md §2 UserCertificationInfo', text: '`requirementID` (`sreq|<uuid>`); `userID`; `expires?` ts (absent = no expiry)' },
  { where: 'management-api.md §2 SecurityRequirementInfo', text: '`type` string (e.g. `UserCert`)' },
];

export const CERTIFICATION_SCOPE =
  'A project is held to its own `securityLevel` only: the spec does not say that a child project takes its parent\'s level, so a member of a child project without a level is not checked against the parent\'s (and a child with its own level is checked against that one alone). ' +
  'Every requirement is taken as held through a certification, whatever its `type` (the spec names only `UserCert`, as an example). ' +
  'A project naming a level security_levels does not list, and a level naming a requirement security_requirements does not list, are skipped here and reported by `security-reference-unknown`. ' +
  'Only the memberships the API lists are seen: whether inherited memberships are listed is not documented.';
