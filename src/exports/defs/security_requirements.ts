import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'security_requirements',
  description: 'One row per security requirement.',
  route: 'security-requirements',
  key: ['id'],
  columns: [
    field('id'),
    field('name'),
    field('desc'),
    field('type'),
    field('created'),
    field('modified'),
    field('data.type'),
    field('data.expires'),
    field('data.defaultExpiration', { note: 'a duration in milliseconds' }),
    field('data.maxExpiration', { note: 'a duration in milliseconds' }),
  ],
});
