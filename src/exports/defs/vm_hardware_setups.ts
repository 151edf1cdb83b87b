import { count, defineExport, field, unavailable } from '../define.js';

// No documented GET route returns a brick in full: only the write route PATCH /api/vms/bricks
// answers with a whole BrickInfo, and this tool calls no write route. So no proposedRoute.
const REDUCED = (f: string) =>
  `GET /api/vms/bricks returns a reduced projection without ${f}, and no documented GET route returns it (only the ` +
  `write route PATCH /api/vms/bricks answers with a full BrickInfo); the backend would have to add ${f} to the ` +
  `list projection`;

export default defineExport({
  name: 'vm_hardware_setups',
  description:
    'One row per hardware setup (brick) of GET /api/vms/bricks, with the number of VM configs using it ' +
    "counted over every realm's GET /api/vms/{realm}/configs.",
  route: 'vms-bricks',
  key: ['id'],
  columns: [
    field('id'),
    field('name'),
    field('description'),
    field('setup', { note: 'markdown setup instructions' }),
    field('vcores'),
    field('maxMemBytes'),
    field('realmID'),
    field('libvirt.image.pool'),
    field('libvirt.image.volume'),
    field('libvirt.video', { note: 'null: none (the documented default), or no libvirt configuration' }),
    field('libvirt.pty', { default: { value: false, spec: 'default false' }, note: 'null: no libvirt configuration' }),
    field('libvirt.clockOffset', {
      default: {
        value: 'utc',
        by: 'format',
        cases: { windows: 'localtime' },
        spec: 'default localtime for Windows, utc otherwise',
      },
      note: 'null: no libvirt configuration',
    }),
    field('libvirt.nic', {
      default: { value: 'virtio', spec: 'default virtio' },
      note: 'null: no libvirt configuration',
    }),
    field('libvirt.devices', { as: 'entries', note: 'device type = count' }),
    field('libvirt.extraXML'),
    field('libvirt.headfullGPU'),
    field('libvirt.deviceBusType'),
    field('altvirt.imageID'),
    field('altvirt.timezone'),
    field('altvirt.devices', { as: 'entries', note: 'GPU type = count' }),
    field('altvirt.osType'),
    field('altvirt.debug'),
    field('whitelist.teamIDs', { note: 'null (with whitelist_userIDs): no whitelist, the brick is public' }),
    field('whitelist.userIDs'),
    field('creatorID'),
    unavailable('externalServers', REDUCED('externalServers')),
    field('format'),
    field('imageID'),
    field('created'),
    field('modified'),
    field('noQuota', {
      note:
        'exempt from team quotas. The spec lists it as a required field (no `?`) with "default false", so no ' +
        'default is applied: a brick without it is counted under validation and written as null',
    }),
    field('params'),
    unavailable('vmType', REDUCED('vmType')),
    field('debug'),
    count('vmConfigCount', { route: 'vms-configs', on: 'id', by: 'brick', note: 'spec section 4, rule 4' }),
    unavailable(
      'deviceCount',
      'the field that backs the device count of a brick is not shown in the spec (management-api.md section 4, rule 6)',
    ),
  ],
  omit: {
    settings: 'frontend-only settings, not inventory data',
  },
});
