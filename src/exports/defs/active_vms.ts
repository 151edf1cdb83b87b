import { defineExport, field, realm } from '../define.js';

export default defineExport({
  name: 'active_vms',
  description:
    'One row per running VM of every realm (GET /api/vms/{realm}/active), with the realm it was read from. Written with `--include vms`.',
  route: 'vms-active',
  include: 'vms',
  key: ['realmID', 'id'],
  columns: [
    realm('realmID', 'the realm whose GET /api/vms/{realm}/active listed the VM'),
    field('id'),
    field('name'),
    field('config', { note: 'VM config id (vm_configs.id)' }),
    field('owner', { note: 'user id (or VM id, see ownerType)' }),
    field('ownerType'),
    field('authedUsers', { note: 'every authorized user, owner excluded' }),
    field('managers', { note: 'users who may authorize others; a subset of authedUsers' }),
    field('brick', { note: 'hardware setup id (vm_hardware_setups.id)' }),
    field('team'),
    field('project'),
    field('active'),
    field('drives', { as: 'entries', note: 'device name = drive id' }),
    field('ip', { note: 'host address' }),
    field('vpn.host', { note: 'null (with vpn_port): the VM has not reported its endpoints' }),
    field('vpn.port'),
    field('ssh.host', { note: 'null (with ssh_port): the VM has not reported its endpoints' }),
    field('ssh.port'),
    field('protocolVer'),
    field('pubkey.modulus', { note: 'hex RSA modulus; null: no public key' }),
    field('pubkey.publicExponent', { note: 'hex' }),
    field('resources.vms'),
    field('resources.vcpus'),
    field('resources.memory'),
    field('resources.devices', { as: 'entries', note: 'device type = count' }),
    field('start'),
    field('shutDown'),
    field('lastPing'),
    field('services', {
      as: 'json',
      note: 'application services the VM exposes (no key is documented), as compact JSON with sorted keys',
    }),
    field('systemInfo', {
      as: 'json',
      note: 'what the VM reports of its system (no key is documented), as compact JSON with sorted keys',
    }),
  ],
  omit: {
    realmID:
      'the realm of the route that listed the VM is the realmID column (the spec: the running VMs of that ' +
      'realm), so the field repeats it; a VM whose realmID names another realm is counted under validation',
    vmcInfo:
      "the VM controller's reports: free-form objects with a timestamp each, which change with every report " +
      '(diagnostics, not inventory); kept byte for byte in raw/',
  },
});
