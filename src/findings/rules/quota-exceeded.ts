import { defineRule, keyText, ts } from '../define.js';
import { ref } from '../certifications.js';

export default defineRule({
  id: 'quota-exceeded',
  severity: 'medium',
  description: 'A team\'s usage is above its `teamQuotas` cores or memory.',
  meaning:
    'For each team of teams: a finding when `teamQuotas_cores` is set and `usage_vms_cores` is above it, and one when `teamQuotas_memory` is set and `usage_vms_mem` (bytes) is above it. ' +
    'An absent quota is no limit. Storage and device quotas are not compared: the usage row has no storage type or device breakdown. ' +
    'The usage row does not separate VMs on hardware setups exempt from team quotas (`noQuota`), so a team running such VMs can be reported without breaking its quota.',
  spec: [
    { where: 'management-api.md §2 QuotasTyped', text: '`cores?` number (undefined = no limit); `memory?` number bytes (undefined = no limit)' },
    { where: 'management-api.md §2 UsageInfo', text: '`vms` {`cnt`, `mem` bytes, `cores`} … Groups with no resources may be absent from a row.' },
    { where: 'management-api.md §2 BrickInfo', text: '`noQuota` boolean (default false; whether the brick is exempt from team quotas)' },
  ],
  reads: [{ export: 'teams', columns: ['id', 'name', 'teamQuotas_cores', 'teamQuotas_memory', 'usage_vms_cores', 'usage_vms_mem'] }],
  *check(ctx) {
    for (const t of ctx.records('teams')) {
      const name = `team "${keyText(t.name)}" (${keyText(t.id)})`;
      const cores = ts(t.teamQuotas_cores);
      const usedCores = ts(t.usage_vms_cores) ?? 0;
      if (cores !== undefined && usedCores > cores) yield { subject: ref('teams', t.id), related: [], detail: `${name} uses ${usedCores} cores, above its team quota of ${cores}` };
      const memory = ts(t.teamQuotas_memory);
      const usedMemory = ts(t.usage_vms_mem) ?? 0;
      if (memory !== undefined && usedMemory > memory) yield { subject: ref('teams', t.id), related: [], detail: `${name} uses ${usedMemory} bytes of memory, above its team quota of ${memory}` };
    }
  },
});
