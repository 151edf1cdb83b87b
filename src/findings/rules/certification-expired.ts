import { iso, ts } from '../define.js';
import { certificationRule } from '../certifications.js';

export default certificationRule({
  id: 'certification-expired',
  severity: 'high',
  description:
    'A member of a project whose security level requires a requirement holds a certification for it only ' +
    "with an `expires` before the snapshot's time.",
  meaning:
    "The same members and requirements as `certification-missing`; of the user's certifications for the requirement " +
    'the best is taken (one without `expires` first, else the one expiring last). ' +
    "A finding when that one has `expires` strictly before the snapshot's time (the manifest's `time`): expiring " +
    'exactly at that time, or later the same day, is not expired (see `certification-expiring`). ' +
    'A certification without `expires` never expires (the spec: absent = no expiry).',
  detail(r, ctx) {
    const expires = r.best ? ts(r.best.expires) : undefined;
    if (expires === undefined || expires >= ctx.now) return undefined;
    return `holds a certification for it that expired ${iso(expires)}`;
  },
});
