import { defineExport, field, join } from '../define.js';
import { USAGE_ABSENT_IS_ZERO, USAGE_FIELDS } from './usage-groups.js';

export default defineExport({
  name: 'resources_by_project',
  description:
    'One row per row of GET /api/projects/usage, `no-project` and deleted projects (`exists` false) ' +
    'included, with the project name joined from GET /api/projects.',
  route: 'projects-usage',
  key: ['projectID'],
  columns: [
    field('id', { name: 'projectID', note: 'a project id, or `no-project` for untagged resources' }),
    join('projectName', {
      route: 'projects',
      on: 'id',
      by: 'id',
      path: 'name',
      note: 'null for `no-project` and for projects GET /api/projects does not list',
    }),
    field('exists', { note: 'false: the project was deleted but still holds resources' }),
    ...USAGE_FIELDS.map((path) =>
      field(path, { default: USAGE_ABSENT_IS_ZERO, note: '0 when the group is absent from the row' }),
    ),
  ],
});
