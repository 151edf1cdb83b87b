import { defineExport, equals, field } from '../define.js';

export default defineExport({
  name: 'realms',
  description:
    'One row per realm of GET /api/realms; before 3.14.1 (no such route), one row per `--realms` id with ' +
    'name and driver null. Written with `--include vms`.',
  route: 'realms',
  each: 'realms',
  include: 'vms',
  realmListFallback: 'id',
  key: ['id'],
  columns: [
    field('realms.id', {
      name: 'id',
      note: 'used as {realm} in the per-realm routes, and as realmID in the other exports',
    }),
    field('realms.name', { name: 'name', note: 'display name' }),
    field('realms.driver', { name: 'driver', note: 'virtualization driver' }),
    equals('isDefault', {
      path: 'realms.id',
      other: 'defaultRealm',
      note: 'the realm used when none is given (defaultRealm)',
    }),
  ],
});
