import { defineExport, field, realm } from '../define.js';

export default defineExport({
  name: 'vm_configs',
  description:
    'One row per VM config of every realm (GET /api/vms/{realm}/configs), with the realm it was read from. Written with `--include vms`.',
  route: 'vms-configs',
  include: 'vms',
  key: ['realmID', 'id'],
  columns: [
    realm(
      'realmID',
      'the realm whose GET /api/vms/{realm}/configs listed the config, named as in vm_images and drives; a config id may repeat across realms',
    ),
    field('id'),
    field('name'),
    field('description'),
    field('state'),
    field('vmID', { note: 'the spawned VM (active_vms.id); null: never spawned' }),
    field('owners', { note: 'user ids' }),
    field('brick', { note: 'hardware setup id (vm_hardware_setups.id)' }),
    field('team'),
    field('project'),
    field('rwDrives', { note: 'read-write drive ids' }),
    field('roDrives', { note: 'read-only drive ids' }),
    field('driveSlots', { as: 'entries', sheetAsList: true, note: 'drive id = slot number' }),
    field('mac'),
    field('macOptions'),
    field('host', { note: 'pinned host; null: not pinned' }),
    field('controllerID'),
    field('slurmAccount'),
    field('lastLaunched', { note: 'null: never launched' }),
    field('lastPing', { note: 'null: the spawned VM never contacted the backend' }),
    field('services', {
      as: 'json',
      note: 'application services configured for the VM (no key is documented), as compact JSON with sorted keys',
    }),
    field('settings', {
      as: 'json',
      note: 'free-form config settings (not called frontend settings; no key is documented), as compact JSON with sorted keys',
    }),
  ],
});
