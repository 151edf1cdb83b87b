import { defineExport, field } from '../define.js';

const IN_TEAMS = 'a team field: in teams';

export default defineExport({
  name: 'team_memberships',
  description: 'One row per team and member, from the `members` of GET /api/teams.',
  route: 'teams',
  each: 'members',
  key: ['teamID', 'memberID'],
  columns: [
    field('id', { name: 'teamID' }),
    field('name', { name: 'teamName' }),
    field('members.id', { name: 'memberID' }),
    field('members.firstName', { name: 'firstName', note: 'empty when the user no longer exists' }),
    field('members.lastName', { name: 'lastName', note: 'empty when the user no longer exists' }),
    field('members.email', { name: 'email' }),
    field('members.lastLogin', { name: 'lastLogin' }),
    field('members.joined', { name: 'joined' }),
    field('members.modified', { name: 'modified', note: 'last membership change' }),
    field('members.perm', { name: 'perm', note: 'per-team permission level' }),
  ],
  omit: {
    desc: IN_TEAMS,
    created: IN_TEAMS,
    modified: IN_TEAMS,
    quotas: IN_TEAMS,
    teamQuotas: IN_TEAMS,
    perUserQuotas: IN_TEAMS,
    settings: IN_TEAMS,
    startDate: IN_TEAMS,
    endDate: IN_TEAMS,
  },
});
