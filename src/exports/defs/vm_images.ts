import { defineExport, field, realm } from '../define.js';

export default defineExport({
  name: 'vm_images',
  description:
    'One row per VM image of every realm. `info_*` columns hold the realm-specific extra info: ' +
    'pool/volume/deviceBusType for libvirt realms, sourceType/timezone for the alternative driver.',
  route: 'vms-images',
  key: ['realmID', 'id'],
  columns: [
    realm('realmID', 'the realm id, named as in drives and vm_hardware_setups'),
    field('id'),
    field('name'),
    field('description'),
    field('size', { note: 'bytes' }),
    field('imageType'),
    field('info.pool'),
    field('info.volume'),
    field('info.deviceBusType'),
    field('info.sourceType'),
    field('info.timezone'),
    field('created'),
    field('modified'),
    field('version', { note: '0 for a base image', default: { value: 0, spec: 'empty for a base image (version 0)' } }),
    field('parent', { note: 'null: a base image, which has no parent' }),
    field('limit', { note: 'max concurrent VMs; null: no limit (the documented meaning of an absent limit)' }),
    field('secureBoot', { note: 'null: the image predates the field (no default documented)' }),
    field('settings.driveFormats', {
      note: 'formats allowed for drives attached to VMs running the image; null: not set',
    }),
  ],
  omit: {
    'settings.*': 'frontend-only settings (the spec documents only driveFormats, exported as settings_driveFormats)',
  },
});
