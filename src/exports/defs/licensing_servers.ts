import { defineExport, field } from '../define.js';

export default defineExport({
  name: 'licensing_servers',
  description: 'One row per external (licensing) server VMs may reach.',
  route: 'external-servers',
  key: ['id'],
  columns: [
    field('id'),
    field('server', { note: 'hostname or IP' }),
    field('ports', { note: 'one port or a comma-separated list' }),
    field('protocol'),
    field('owner'),
    field('created'),
    field('active', { note: 'whether VMs may currently reach it' }),
    field('group'),
    field('deactivation', { note: 'scheduled deactivation' }),
  ],
});
