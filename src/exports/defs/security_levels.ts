import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'security_levels',
  description: 'One row per security level.',
  route: 'security-levels',
  key: ['id'],
  columns: [
    field('id'),
    field('name'),
    field('desc'),
    field('created'),
    field('modified'),
    field('requirements', { note: 'ids of the security requirements making up the level' }),
  ],
});
