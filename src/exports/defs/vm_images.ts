import { defineExport, field, realm } from '../define.js';

export default defineExport({
  name: 'vm_images',
  description: 'One row per VM image of every realm. `info_*` columns hold the realm-specific extra info: pool/volume/deviceBusType for libvirt realms, sourceType/timezone for the alternative driver.',
  route: 'vms-images',
  key: ['realm', 'id'],
  columns: [
    realm('realm'),
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
    field('version', { note: 'null for a base image (version 0)' }),
    field('parent', { note: 'null for a base image' }),
    field('limit', { note: 'max concurrent VMs; null: no limit' }),
    field('secureBoot', { note: 'null on images that predate the field' }),
  ],
  omit: {
    settings: 'frontend-only settings, not inventory data',
  },
});
