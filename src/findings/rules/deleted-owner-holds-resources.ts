import { defineRule, keyText, resourcesHeld } from '../define.js';
import { ref } from '../certifications.js';

export default defineRule({
  id: 'deleted-owner-holds-resources',
  severity: 'medium',
  description:
    'A project (or team) usage row with `exists: false` still holds VMs, drives or vault files: resources whose owner was deleted.',
  meaning:
    'A finding for each row of resources_by_project (GET /api/projects/usage) whose `exists` is false and that ' +
    'counts at least one VM (`vms_cnt`), drive (`drives_cnt`) or vault file (`files_cnt`). ' +
    'A row whose `exists` is true, or not a boolean (null: a validation issue), is not a deleted project; `no-project` (resources of no project) exists. ' +
    'The usage rows of deleted teams (GET /api/teams/usage) are in no export: `teams` holds one row per team of GET ' +
    '/api/teams, and the `no-team` row and those of deleted teams stay in the raw collection ' +
    'only. So the rule cannot see deleted teams on any snapshot, and its `reason` says so every time it is evaluated.',
  spec: [
    {
      where: 'management-api.md §2 ProjectUsageInfo',
      text: 'Same as UsageInfo, but `id` is a project id or `no-project` for untagged resources, and `exists` is false when the project was deleted.',
    },
    {
      where: 'management-api.md §2 UsageInfo',
      text:
        '`exists` boolean (false when the team was deleted but still holds resources); `files` {`cnt` number of ' +
        'vault files, `size` bytes}; `vms` {`cnt`, `mem` bytes, `cores`}; `drives` {`cnt`, `size` provisioned bytes, ' +
        '`used` consumed bytes}. Groups with no resources may be absent from a row.',
    },
    {
      where: 'management-api.md §4 Rules',
      text:
        '3. Team usage and project usage include one row with id `no-team` / `no-project` for untagged resources ' +
        '… Rows for deleted teams or projects that still hold resources have `exists` false.',
    },
  ],
  reads: [
    {
      export: 'resources_by_project',
      columns: ['projectID', 'exists', 'vms_cnt', 'drives_cnt', 'files_cnt', 'files_size'],
    },
  ],
  unseen:
    'deleted teams not evaluated: the usage rows of deleted teams are in no export (teams has one row per team ' +
    'of GET /api/teams; they stay in the raw collection)',
  *check(ctx) {
    for (const p of ctx.records('resources_by_project')) {
      if (p.exists !== false) continue;
      const held = resourcesHeld(p.vms_cnt, p.drives_cnt, p.files_cnt, p.files_size);
      if (held === undefined) continue;
      yield {
        subject: ref('resources_by_project', p.projectID),
        detail: `deleted project ${keyText(p.projectID)} (exists: false) still holds ${held}`,
        about: { project: keyText(p.projectID) },
      };
    }
  },
});
