import { defineRule, iso, keyText, ts, type RowRef } from '../define.js';
import { membershipPairs, ref, strings } from '../certifications.js';
import type { ExportRecord } from '../../exports/types.js';

/** A lapsed user's memberships and VMs, gathered. */
class Access {
  readonly teams: RowRef[] = [];
  readonly projects: RowRef[] = [];
  readonly owned: RowRef[] = [];
  readonly authed: RowRef[] = [];
  /** Listed by GET /api/vms/{realm}/active but not `active` true: not counted as access, said in the detail. */
  readonly inactiveOwned: RowRef[] = [];
  readonly inactiveAuthed: RowRef[] = [];

  /** `why`: why the user counts as lapsed (lapsed()). */
  constructor(readonly why: string) {}
}

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

/** The running VMs a lapsed user owns or is authorized on, and those listed with `active` not true, which are not counted. */
function vmsText(a: Access, read: boolean): string {
  if (!read) return '';
  const inactive = a.inactiveOwned.length + a.inactiveAuthed.length;
  const notCounted =
    inactive > 0
      ? ` (not counted: owns ${a.inactiveOwned.length} and is authorized on ${a.inactiveAuthed.length} VM(s) listed as running with \`active\` not true)`
      : '';
  return `, owns ${a.owned.length} running VM(s) and is authorized on ${a.authed.length} other(s)${notCounted}`;
}

export default defineRule({
  id: 'user-expired-with-access',
  severity: 'high',
  description:
    'A user whose `expiration` has passed, or who is deactivated, is still a team or project member, owns ' +
    'a running VM or is among its `authedUsers`.',
  meaning:
    "A user of user_profiles is lapsed when its `expiration` is strictly before the snapshot's time, or when it has " +
    'a `deactivationType` and either no `deactivatedUntil` or a `deactivatedUntil` at or after that time ' +
    '(a `deactivatedUntil` already passed ends a temporary deactivation: lapsed is "a `deactivationType` ' +
    'whose `deactivatedUntil`, if any, has not passed"; one at exactly that time has not passed). `state` is not ' +
    'read: its values are not documented, so "deactivated" is read from `deactivationType` and `deactivatedUntil` ' +
    'only. ' +
    'One finding per lapsed user that is a member of a team (team_memberships) or of a project (project_memberships, ' +
    'once per project however many rows), owns a running VM (active_vms `owner`, unless `ownerType` is `VM`: then ' +
    "the owner is a VM) or is among a running VM's `authedUsers`; every such membership and VM is related. " +
    'A running VM is one of active_vms whose `active` is true: a VM listed with `active` false ' +
    '(or not a boolean, exported as null) counts neither for its owner nor for its authorized users. ' +
    'A lapsed user whose only link is to such VMs is not reported; one reported for other access has them related ' +
    'and counted apart in the detail ("not counted: …"), so that the auditor sees them. ' +
    'The running VMs are read from active_vms, written with `--include vms`: a snapshot taken without it has the ' +
    'rule evaluated over the memberships alone, and its reason says that the VMs were not evaluated; one taken with ' +
    "it whose running VMs were not all read (a realm's route failed) has the rule not evaluated.",
  spec: [
    {
      where: 'management-api.md §2 UserInfo',
      text:
        '`state` string (account state); `deactivationType?` DeactivationType; `expiration?` ts (account ' +
        'expiration); `deactivatedUntil?` ts (temporary deactivation end). Allowed values of `role` and `state` and ' +
        'the permission codes: not shown.',
    },
    {
      where: 'management-api.md §2 UserInfo',
      text:
        'DeactivationType values: `Admin`, `FailedPassword` (consecutive failed passwords), `Timeout` ' +
        '(inactivity), `XSS` (detected attack attempt), `Registration` (pending activation).',
    },
    { where: 'management-api.md §2 TeamInfo', text: '`members` TeamMemberInfo[]; TeamMemberInfo: `id` string' },
    {
      where: 'management-api.md §2 ProjectMembershipInfo',
      text: '`projectID` string; `userID` string; … `duplicate` boolean (the membership is also inherited)',
    },
    {
      where: 'management-api.md §2 VirtualMachine',
      text: '`owner` string; `authedUsers` string[] (all authorized users, owner excluded); `active` boolean',
    },
  ],
  reads: [
    { export: 'user_profiles', columns: ['id', 'expiration', 'deactivationType', 'deactivatedUntil'] },
    { export: 'team_memberships', columns: ['teamID', 'memberID'] },
    { export: 'project_memberships', columns: ['projectID', 'userID', 'id'] },
    {
      export: 'active_vms',
      columns: ['realmID', 'id', 'owner', 'ownerType', 'authedUsers', 'active'],
      optional: 'the running VMs',
    },
  ],
  *check(ctx) {
    // The lapsed users first: only their memberships and VMs are gathered.
    const access = new Map<string, Access>();
    for (const u of ctx.records('user_profiles')) {
      if (typeof u.id !== 'string' || access.has(u.id)) continue;
      const why = lapsed(u, ctx.now);
      if (why) access.set(u.id, new Access(why));
    }
    if (access.size === 0) return;
    const of = (user: unknown) => (typeof user === 'string' ? access.get(user) : undefined);
    for (const m of ctx.records('team_memberships'))
      of(m.memberID)?.teams.push(ref('team_memberships', m.teamID, m.memberID));
    for (const { first } of membershipPairs(ctx.records('project_memberships'))) {
      of(first.userID)?.projects.push(ref('project_memberships', first.projectID, first.userID, first.id));
    }
    if (ctx.has('active_vms')) {
      for (const vm of ctx.records('active_vms')) {
        const row = () => ref('active_vms', vm.realmID, vm.id);
        const running = vm.active === true;
        if (vm.ownerType !== 'VM') {
          const a = of(vm.owner);
          (running ? a?.owned : a?.inactiveOwned)?.push(row());
        }
        for (const user of new Set(strings(vm.authedUsers))) {
          if (user === vm.owner) continue;
          const a = of(user);
          (running ? a?.authed : a?.inactiveAuthed)?.push(row());
        }
      }
    }
    for (const [user, a] of access) {
      // A VM listed but not active grants no access by itself (a running VM, `active` true).
      if (a.teams.length + a.projects.length + a.owned.length + a.authed.length === 0) continue;
      yield {
        subject: ref('user_profiles', user),
        related: [...a.teams, ...a.projects, ...a.owned, ...a.authed, ...a.inactiveOwned, ...a.inactiveAuthed],
        detail:
          `user ${keyText(user)}: ${a.why}, still a member of ${a.teams.length} team(s) and ${a.projects.length} ` +
          `project(s)${vmsText(a, ctx.has('active_vms'))}`,
        about: { user, vms: [...a.owned, ...a.authed].map((r) => [r.key[0]!, r.key[1]!] as const) },
      };
    }
  },
});
