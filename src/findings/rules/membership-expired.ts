import { defineRule, iso, keyText, ts } from '../define.js';
import { membershipPairs, ref } from '../certifications.js';

export default defineRule({
  id: 'membership-expired',
  severity: 'medium',
  description: 'A project membership whose `expires` has passed is still listed.',
  meaning:
    'Once per user and project of project_memberships (an inherited membership, `duplicate`, can be listed beside ' +
    "the direct one): a finding when every row of the pair has an `expires` strictly before the snapshot's time. " +
    'A pair with a row without `expires` (no expiry) or with one at or after that time still grants the membership and is not reported. ' +
    "The subject is the first row of the pair in key order, and the pair's other rows are related. The detail names " +
    'each row of the pair marked `duplicate` by its `id` (the membership is also inherited, so the user may keep ' +
    "access through the parent project), saying which one is the subject's: the subject need not be the row marked.",
  spec: [
    {
      where: 'management-api.md §2 ProjectMembershipInfo',
      text: '`id` string (opaque, base64); `projectID` string; `userID` string; … `duplicate` boolean (the membership is also inherited); `expires?` ts.',
    },
    { where: 'management-api.md §2 Notation', text: '`ts` = epoch milliseconds integer.' },
  ],
  reads: [{ export: 'project_memberships', columns: ['projectID', 'userID', 'id', 'duplicate', 'expires'] }],
  *check(ctx) {
    for (const { first, rows } of membershipPairs(ctx.records('project_memberships'))) {
      const ends = rows.map((r) => ts(r.expires));
      if (ends.some((e) => e === undefined || e >= ctx.now)) continue;
      const last = Math.max(...(ends as number[]));
      // Named row by row: the pair's first row (the subject) need not be the one marked duplicate.
      const marked = rows.filter((r) => r.duplicate === true);
      const inherited =
        marked.length > 0
          ? `; marked duplicate (the membership is also inherited, so the user may keep access through a parent ` +
            `project): ${marked.map((r) => `row ${keyText(r.id)}${r === first ? ' (this one)' : ''}`).join(', ')}`
          : '';
      yield {
        subject: ref('project_memberships', first.projectID, first.userID, first.id),
        related: [
          ref('projects', first.projectID),
          ...rows.filter((r) => r !== first).map((r) => ref('project_memberships', r.projectID, r.userID, r.id)),
        ],
        detail:
          `user ${first.userID as string} is still listed as a member of project ${first.projectID as string}, ` +
          `a membership that expired ${iso(last)}${inherited}`,
        about: { user: first.userID as string, project: first.projectID as string },
      };
    }
  },
});
