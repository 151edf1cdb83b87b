import { defineExport, field, flatName, join } from '../define.js';
import { USAGE_ABSENT_IS_ZERO, USAGE_FIELDS } from './usage-groups.js';

export default defineExport({
  name: 'teams',
  description:
    'One row per team, with its row of GET /api/teams/usage joined by team id (usage rows of `no-team` ' +
    'and of deleted teams are not teams and stay out). Members are in team_memberships.',
  route: 'teams',
  key: ['id'],
  columns: [
    field('id'),
    field('name'),
    field('desc'),
    field('created'),
    field('modified'),
    field('quotas', { as: 'entries', note: 'legacy representation' }),
    field('teamQuotas.cores', { note: 'null: no limit (or no team quota set)' }),
    field('teamQuotas.memory', { note: 'bytes; null: no limit (or no team quota set)' }),
    field('teamQuotas.storage', { as: 'entries', note: 'storage type = bytes; [] : no limits' }),
    field('teamQuotas.devices', { as: 'entries', note: 'device type = count; [] : no limits' }),
    field('perUserQuotas.cores', { note: 'null: no limit (or no per-user quota set)' }),
    field('perUserQuotas.memory', { note: 'bytes; null: no limit (or no per-user quota set)' }),
    field('perUserQuotas.storage', { as: 'entries', note: 'storage type = bytes; [] : no limits' }),
    field('perUserQuotas.devices', { as: 'entries', note: 'device type = count; [] : no limits' }),
    field('settings', {
      as: 'json',
      note: 'free-form team settings (no key is documented), as compact JSON with sorted keys',
    }),
    field('startDate', { note: 'resource access start' }),
    field('endDate', { note: 'resource access end' }),
    field('members', { name: 'memberCount', as: 'count', note: 'the members themselves are in team_memberships' }),
    ...USAGE_FIELDS.map((path) =>
      join(`usage_${flatName(path)}`, {
        route: 'teams-usage',
        on: 'id',
        by: 'id',
        path,
        default: USAGE_ABSENT_IS_ZERO,
        note:
          "0 when the group is absent from the team's usage row or the team has no row; null only when GET " +
          '/api/teams/usage was not read (then listed in nullFields)',
      }),
    ),
  ],
});
