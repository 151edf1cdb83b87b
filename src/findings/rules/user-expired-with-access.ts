import { defineRule, iso, keyText, ts, type RowRef } from '../define.js';
import { membershipPairs, ref } from '../certifications.js';
import type { ExportRecord } from '../../exports/types.js';

/** Why a user counts as expired or deactivated at `now`, or undefined. */
function lapsed(u: ExportRecord, now: number): string | undefined {
  const why: string[] = [];
  const expiration = ts(u.expiration);
  if (expiration !== undefined && expiration < now) why.push(`account expired ${iso(expiration)}`);
  if (typeof u.deactivationType === 'string' && u.deactivationType !== '') {
    const until = ts(u.deactivatedUntil);
    if (until === undefined) why.push(`deactivated (${u.deactivationType})`);
    else if (until >= now) why.push(`deactivated (${u.deactivationType}) until ${iso(until)}`);
  }
  return why.length > 0 ? why.join(' and ') : undefined;
}

export default defineRule({
  id: 'user-expired-with-access',
  severity: 'high',
  description: 'A user whose `expiration` has passed, or who is deactivated, is still a team or project member.',
  meaning:
    'A user of user_profiles is lapsed when its `expiration` is strictly before the snapshot\'s time, or when it has a `deactivationType` and either no `deactivatedUntil` or a `deactivatedUntil` at or after that time ' +
    '(a `deactivatedUntil` already passed ends a temporary deactivation). `state` is not read: its values are not documented, so "deactivated" is read from `deactivationType` and `deactivatedUntil` only. ' +
    'One finding per lapsed user that is a member of a team (team_memberships) or of a project (project_memberships, once per project however many rows), every such membership related. ' +
    'Not evaluated for VMs: the owners and `authedUsers` of running VMs (GET /api/vms/<realm>/active) are in none of the 15 exports, so a lapsed user who owns or is authorised on a running VM and is a member of nothing is not reported.',
  spec: [
    { where: 'management-api.md §2 UserInfo', text: '`state` string (account state); `deactivationType?` DeactivationType; `expiration?` ts (account expiration); `deactivatedUntil?` ts (temporary deactivation end). Allowed values of `role` and `state` and the permission codes: not shown.' },
    { where: 'management-api.md §2 UserInfo', text: 'DeactivationType values: `Admin`, `FailedPassword` (consecutive failed passwords), `Timeout` (inactivity), `XSS` (detected attack attempt), `Registration` (pending activation).' },
    { where: 'management-api.md §2 TeamInfo', text: '`members` TeamMemberInfo[]; TeamMemberInfo: `id` string' },
    { where: 'management-api.md §2 ProjectMembershipInfo', text: '`projectID` string; `userID` string; … `duplicate` boolean (the membership is also inherited)' },
    { where: 'management-api.md §2 VirtualMachine', text: '`owner` string; `authedUsers` string[] (all authorized users, owner excluded)' },
  ],
  reads: [
    { export: 'user_profiles', columns: ['id', 'expiration', 'deactivationType', 'deactivatedUntil'] },
    { export: 'team_memberships', columns: ['teamID', 'memberID'] },
    { export: 'project_memberships', columns: ['projectID', 'userID', 'id'] },
  ],
  *check(ctx) {
    const access = new Map<string, RowRef[]>();
    const add = (user: unknown, r: RowRef) => {
      if (typeof user !== 'string') return;
      const list = access.get(user);
      if (list) list.push(r);
      else access.set(user, [r]);
    };
    for (const m of ctx.records('team_memberships')) add(m.memberID, ref('team_memberships', m.teamID, m.memberID));
    for (const { first } of membershipPairs(ctx.records('project_memberships'))) add(first.userID, ref('project_memberships', first.projectID, first.userID, first.id));
    for (const u of ctx.records('user_profiles')) {
      if (typeof u.id !== 'string') continue;
      const memberships = access.get(u.id);
      const why = memberships ? lapsed(u, ctx.now) : undefined;
      if (!memberships || !why) continue;
      const teams = memberships.filter((m) => m.export === 'team_memberships').length;
      const projects = memberships.length - teams;
      yield {
        subject: ref('user_profiles', u.id),
        related: memberships,
        detail: `user ${keyText(u.id)}: ${why}, still a member of ${teams} team(s) and ${projects} project(s)`,
      };
    }
  },
});
