import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'project_memberships',
  description:
    'One row per project membership (whether inherited memberships are listed is not documented; `duplicate` marks one that is also inherited).',
  route: 'projects-memberships',
  key: ['projectID', 'userID', 'id'],
  columns: [
    field('id', { note: 'opaque' }),
    field('projectID'),
    field('userID'),
    field('added'),
    field('modified'),
    field('canManage'),
    field('duplicate', { note: 'the membership is also inherited' }),
    field('expires'),
  ],
});
