import { defineRule, keyText } from '../define.js';
import { LEVEL_REQUIREMENTS_SPEC, byId, ref, strings } from '../certifications.js';

export default defineRule({
  id: 'security-reference-unknown',
  severity: 'medium',
  description:
    'A project names a security level, or a level names a requirement, that the snapshot does not list: its members cannot be checked against it.',
  meaning:
    'A finding for each project whose `securityLevel` is set and is not the `id` of a row of security_levels, and ' +
    "one for each requirement id in a level's `requirements` that is not the `id` of a row of security_requirements " +
    '(each id once per level). ' +
    'The certification rules skip such a level or requirement: this rule is where they show.',
  spec: [
    LEVEL_REQUIREMENTS_SPEC,
    { where: 'management-api.md §2 SecurityRequirementInfo', text: '`id` string (`sreq|<uuid>`)' },
  ],
  part: 'for a level, the requirement id it names that is not listed; a project has one finding',
  reads: [
    { export: 'projects', columns: ['id', 'name', 'securityLevel'] },
    { export: 'security_levels', columns: ['id', 'name', 'requirements'] },
    { export: 'security_requirements', columns: ['id'] },
  ],
  *check(ctx) {
    const levels = byId(ctx.records('security_levels'));
    const requirements = byId(ctx.records('security_requirements'));
    for (const p of ctx.records('projects')) {
      if (typeof p.securityLevel !== 'string' || levels.has(p.securityLevel)) continue;
      yield {
        subject: ref('projects', p.id),
        detail: `project "${keyText(p.name)}" (${keyText(p.id)}) requires security level ${p.securityLevel}, which security_levels does not list`,
        about: { project: keyText(p.id) },
      };
    }
    for (const l of ctx.records('security_levels')) {
      for (const reqID of new Set(strings(l.requirements))) {
        if (requirements.has(reqID)) continue;
        yield {
          subject: ref('security_levels', l.id),
          detail: `security level "${keyText(l.name)}" (${keyText(l.id)}) names requirement ${reqID}, which security_requirements does not list`,
          part: reqID,
          about: { level: keyText(l.id) },
        };
      }
    }
  },
});
