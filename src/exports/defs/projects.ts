import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'projects',
  description: 'One row per project.',
  route: 'projects',
  key: ['id'],
  columns: [
    field('id'),
    field('name'),
    field('desc', { note: 'markdown' }),
    field('securityLevel', { note: 'id of the required security level; null: none set' }),
    field('parent', { note: 'parent project id; null: a top-level project' }),
    field('settings', {
      as: 'json',
      note: 'free-form project settings (no key is documented), as compact JSON with sorted keys',
    }),
    field('created'),
    field('modified'),
  ],
});
