import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'user_certifications',
  description: 'One row per user certification.',
  route: 'users-certifications',
  key: ['userID', 'requirementID', 'id'],
  columns: [
    field('id', { note: 'opaque' }),
    field('requirementID'),
    field('userID'),
    field('expires', { note: 'null: no expiry' }),
    field('created'),
    field('modified'),
    field('modifiedBy', { note: 'user id' }),
  ],
});
