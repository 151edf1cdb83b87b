/**
 * The export groups `--include` can add after the 15 exports
 * (docs/exports.md). Dependency-free, so that the option records (loaded by
 * `--help`) can name the valid values; each export of a group declares it
 * in the export catalog (`include` in src/exports/define.ts).
 */
export const INCLUDES = ['vms'] as const;
export type Include = (typeof INCLUDES)[number];
