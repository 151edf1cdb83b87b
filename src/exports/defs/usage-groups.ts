/**
 * The groups of a usage row (UsageInfo / ProjectUsageInfo), in spec order.
 * Shared by `teams` (joined) and `resources_by_project` (read directly).
 */
import type { ColumnDefault } from '../define.js';

/** Spec: "Groups with no resources may be absent from a row": an absent group counts none. */
export const USAGE_ABSENT_IS_ZERO: ColumnDefault = {
  value: 0,
  scope: 'row',
  spec: 'groups with no resources may be absent from a row',
};

export const USAGE_FIELDS = [
  'files.cnt',
  'files.size',
  'vms.cnt',
  'vms.mem',
  'vms.cores',
  'drives.cnt',
  'drives.size',
  'drives.used',
] as const;
