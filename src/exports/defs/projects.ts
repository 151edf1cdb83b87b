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
    field('securityLevel', { note: 'id of the required security level' }),
    field('parent', { note: 'parent project id' }),
    field('created'),
    field('modified'),
  ],
  omit: {
    settings: 'frontend JSON settings, not inventory data',
  },
});
