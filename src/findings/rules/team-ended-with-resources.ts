import { defineRule, iso, keyText, resourcesHeld, ts } from '../define.js';
import { ref } from '../certifications.js';

export default defineRule({
  id: 'team-ended-with-resources',
  severity: 'medium',
  description: 'A team whose `endDate` has passed still holds VMs, drives or vault files by its usage row.',
  meaning:
    "A finding for each team of teams whose `endDate` is strictly before the snapshot's time and whose usage (GET " +
    '/api/teams/usage, joined into teams) counts at least one VM (`usage_vms_cnt`), drive (`usage_drives_cnt`) or ' +
    'vault file (`usage_files_cnt`). ' +
    'A team without `endDate` has no end. A team without a usage row holds none (the spec: groups with no resources may be absent).',
  spec: [
    { where: 'management-api.md §2 TeamInfo', text: '`endDate?` ts (resource access end)' },
    {
      where: 'management-api.md §2 UsageInfo',
      text:
        '`id` string (team id …); `files` {`cnt` number of vault files, `size` bytes}; `vms` {`cnt`, `mem` ' +
        'bytes, `cores`}; `drives` {`cnt`, `size` provisioned bytes, `used` consumed bytes}. Groups with no ' +
        'resources may be absent from a row.',
    },
  ],
  reads: [
    {
      export: 'teams',
      columns: ['id', 'name', 'endDate', 'usage_vms_cnt', 'usage_drives_cnt', 'usage_files_cnt', 'usage_files_size'],
    },
  ],
  *check(ctx) {
    for (const t of ctx.records('teams')) {
      const end = ts(t.endDate);
      if (end === undefined || end >= ctx.now) continue;
      const held = resourcesHeld(t.usage_vms_cnt, t.usage_drives_cnt, t.usage_files_cnt, t.usage_files_size);
      if (held === undefined) continue;
      yield {
        subject: ref('teams', t.id),
        detail: `team "${keyText(t.name)}" (${keyText(t.id)}) ended ${iso(end)} and still holds ${held}`,
        about: { team: keyText(t.id) },
      };
    }
  },
});
