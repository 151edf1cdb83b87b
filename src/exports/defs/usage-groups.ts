/**
 * The groups of a usage row (UsageInfo / ProjectUsageInfo), in spec order.
 * Shared by `teams` (joined) and `resources_by_project` (read directly).
 */
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
