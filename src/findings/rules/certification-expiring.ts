import { iso, ts } from '../define.js';
import { certificationRule } from '../certifications.js';

const DAY_MS = 86_400_000;

export default certificationRule({
  id: 'certification-expiring',
  severity: 'medium',
  description:
    'A member of a project whose security level requires a requirement holds a certification for it that ' +
    "expires within `--expiring-days` (default 30) of the snapshot's time.",
  meaning:
    'The same members, requirements and best certification as `certification-expired`. ' +
    "A finding when its `expires` is at or after the snapshot's time and at most `--expiring-days` × 86,400,000 ms " +
    "after it (a certification expiring later on the snapshot's own day is expiring, not expired). " +
    'A certification without `expires` never expires.',
  detail(r, ctx) {
    const expires = r.best ? ts(r.best.expires) : undefined;
    if (expires === undefined || expires < ctx.now || expires > ctx.now + ctx.expiringDays * DAY_MS) return undefined;
    return `holds a certification for it that expires ${iso(expires)}, within ${ctx.expiringDays} days`;
  },
});
