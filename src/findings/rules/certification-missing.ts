import { certificationRule } from '../certifications.js';

export default certificationRule({
  id: 'certification-missing',
  severity: 'high',
  description: 'A member of a project whose security level requires a requirement holds no certification for it.',
  meaning:
    `For each user and project of project_memberships (once, however many rows the pair has), where the project's ` +
    `\`securityLevel\` names a level of security_levels: ` +
    `for each requirement of the level's \`requirements\` that security_requirements lists, a finding when ` +
    `user_certifications holds no row with that \`userID\` and \`requirementID\`, expired or not.`,
  detail: (r) => (r.best ? undefined : 'holds no certification for it'),
});
