import { defineRule, iso, ts } from '../define.js';
import {
  CERTIFICATION_INPUTS,
  CERTIFICATION_SCOPE,
  certificationFinding,
  requiredCertifications,
} from '../certifications.js';

export default defineRule({
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
    `A certification without \`expires\` never expires (the spec: absent = no expiry). ${CERTIFICATION_SCOPE}`,
  ...CERTIFICATION_INPUTS,
  *check(ctx) {
    for (const r of requiredCertifications(ctx)) {
      const expires = r.best ? ts(r.best.expires) : undefined;
      if (expires === undefined || expires >= ctx.now) continue;
      yield certificationFinding(r, `holds a certification for it that expired ${iso(expires)}`);
    }
  },
});
