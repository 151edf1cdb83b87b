import { defineRule, keyText, ts } from '../define.js';
import { ref } from '../certifications.js';
import type { ExportRecord } from '../../exports/types.js';

/** The number a legacy `quotas` entry (`name=value`, as teams.quotas lists the map) gives `name`, or undefined: absent, or not a number. */
function legacyQuota(entries: unknown, name: string): number | undefined {
  if (!Array.isArray(entries)) return undefined;
  for (const e of entries) {
    if (typeof e !== 'string' || !e.startsWith(`${name}=`)) continue;
    const text = e.slice(name.length + 1);
    const n = text.trim() === '' ? NaN : Number(text);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The limit a team is held to for one quantity: its `teamQuotas` one, else the legacy map's, and which it is. */
function limitOf(t: ExportRecord, typed: unknown, legacy: string): { limit: number; source: string } | undefined {
  const own = ts(typed);
  if (own !== undefined) return { limit: own, source: `team quota of ${own} (teamQuotas.${legacy})` };
  const old = legacyQuota(t.quotas, legacy);
  return old !== undefined
    ? { limit: old, source: `legacy quota of ${old} (quotas.${legacy}; teamQuotas sets no ${legacy} limit)` }
    : undefined;
}

export default defineRule({
  id: 'quota-exceeded',
  severity: 'medium',
  description:
    "A team's usage is above its `teamQuotas` cores or memory, or its legacy `quotas` `cores` / `memory` where `teamQuotas` sets no such limit.",
  meaning:
    'For each team of teams: a finding when `usage_vms_cores` is above its cores limit, and one when `usage_vms_mem` (bytes) is above its memory limit. ' +
    "The limit is `teamQuotas_cores` (`teamQuotas_memory`) when set; where it is not, the legacy map's `cores` " +
    '(`memory`) entry of `quotas`, a number (an entry that is not a number is no limit); the detail says which one ' +
    'it used. ' +
    'Where `teamQuotas` sets a limit, that one alone is compared (the legacy map is read only ' +
    'where `teamQuotas` sets no such limit), so a legacy entry below it is not reported. The legacy `memory` is ' +
    'taken in bytes, as `teamQuotas.memory` is (the spec gives the map no unit). ' +
    'An absent quota is no limit. Storage and device quotas are not compared: the usage row has no storage type or device breakdown. ' +
    'The usage row does not separate VMs on hardware setups exempt from team quotas (`noQuota`), so a team running ' +
    'such VMs can be reported without breaking its quota.',
  spec: [
    {
      where: 'management-api.md §2 QuotasTyped',
      text: '`cores?` number (undefined = no limit); `memory?` number bytes (undefined = no limit)',
    },
    {
      where: 'management-api.md §2 TeamInfo',
      text: '`quotas` map string -> number (legacy representation); `teamQuotas?` QuotasTyped (absent when no team quota is set)',
    },
    {
      where: 'management-api.md §2 UsageInfo',
      text: '`vms` {`cnt`, `mem` bytes, `cores`} … Groups with no resources may be absent from a row.',
    },
    {
      where: 'management-api.md §2 BrickInfo',
      text: '`noQuota` boolean (default false; whether the brick is exempt from team quotas)',
    },
  ],
  part: '`cores` or `memory`, the quota exceeded',
  reads: [
    {
      export: 'teams',
      columns: ['id', 'name', 'quotas', 'teamQuotas_cores', 'teamQuotas_memory', 'usage_vms_cores', 'usage_vms_mem'],
    },
  ],
  *check(ctx) {
    for (const t of ctx.records('teams')) {
      const name = `team "${keyText(t.name)}" (${keyText(t.id)})`;
      const quantities = [
        { part: 'cores', typed: t.teamQuotas_cores, used: ts(t.usage_vms_cores) ?? 0, unit: 'cores' },
        { part: 'memory', typed: t.teamQuotas_memory, used: ts(t.usage_vms_mem) ?? 0, unit: 'bytes of memory' },
      ];
      for (const q of quantities) {
        const quota = limitOf(t, q.typed, q.part);
        if (quota === undefined || q.used <= quota.limit) continue;
        yield {
          subject: ref('teams', t.id),
          detail: `${name} uses ${q.used} ${q.unit}, above its ${quota.source}`,
          part: q.part,
          about: { team: keyText(t.id) },
        };
      }
    }
  },
});
