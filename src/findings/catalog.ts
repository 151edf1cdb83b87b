/**
 * The rules, in the order docs/findings.md lists them. Every declaration is
 * checked against the export catalog at load: an export or a column a rule
 * reads that the exports do not have is a mistake in the declarations.
 */
import { CATALOG } from '../exports/catalog.js';
import type { RuleDef, RuleInput } from './define.js';
import certificationMissing from './rules/certification-missing.js';
import certificationExpired from './rules/certification-expired.js';
import certificationExpiring from './rules/certification-expiring.js';
import membershipExpired from './rules/membership-expired.js';
import userExpiredWithAccess from './rules/user-expired-with-access.js';
import teamEndedWithResources from './rules/team-ended-with-resources.js';
import deletedOwnerHoldsResources from './rules/deleted-owner-holds-resources.js';
import quotaExceeded from './rules/quota-exceeded.js';
import securityReferenceUnknown from './rules/security-reference-unknown.js';

export const RULES: readonly RuleDef[] = checkRules([
  certificationMissing,
  certificationExpired,
  certificationExpiring,
  membershipExpired,
  userExpiredWithAccess,
  teamEndedWithResources,
  deletedOwnerHoldsResources,
  quotaExceeded,
  securityReferenceUnknown,
]);

export function checkRules(rules: readonly RuleDef[]): readonly RuleDef[] {
  const ids = new Set<string>();
  for (const rule of rules) {
    if (!/^[a-z][a-z0-9-]*$/.test(rule.id))
      throw new Error(`finding rule id ${rule.id} is not lower-case words joined by -`);
    if (ids.has(rule.id)) throw new Error(`two finding rules have the id ${rule.id}`);
    ids.add(rule.id);
    if (rule.reads.length === 0) throw new Error(`finding rule ${rule.id} reads no export`);
    for (const input of rule.reads) {
      const def = CATALOG.find((e) => e.name === input.export);
      if (!def)
        throw new Error(`finding rule ${rule.id} reads export ${input.export}, which the catalog does not have`);
      for (const c of input.columns) {
        if (!def.columns.some((col) => col.name === c))
          throw new Error(`finding rule ${rule.id} reads ${input.export}.${c}, which that export does not have`);
      }
    }
  }
  return Object.freeze([...rules]);
}

/** The exports the inputs read, each with the union of the columns read. */
export function exportsRead(inputs: readonly RuleInput[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const input of inputs) {
    let cols = out.get(input.export);
    if (!cols) out.set(input.export, (cols = new Set()));
    for (const c of input.columns) cols.add(c);
  }
  return out;
}
