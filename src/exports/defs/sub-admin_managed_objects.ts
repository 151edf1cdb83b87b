import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'sub-admin_managed_objects',
  description: 'One row per object (team or project) a sub-admin manages.',
  route: 'users-managed-objects',
  key: ['managerID', 'objectType', 'objectID'],
  columns: [field('managerID'), field('objectType'), field('objectID')],
});
