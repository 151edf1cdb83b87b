/**
 * `--ignore` and the default list of volatile columns: columns that move
 * night after night through ordinary use of the platform, not because anyone
 * changed the inventory. docs/diff.md lists them with the same reasons.
 */
import { UsageError } from '../errors.js';
import type { ExportDef } from '../exports/define.js';

export interface VolatileColumn {
  /** `column` (in every export that has it) or `export.column`. */
  readonly name: string;
  readonly why: string;
}

export const VOLATILE_COLUMNS: readonly VolatileColumn[] = Object.freeze([
  { name: 'lastLogin', why: 'user_profiles and team_memberships: moves with every login' },
  { name: 'drives.sizeOnDisk', why: 'bytes a drive consumes: moves with every write to it' },
  { name: 'drives.attached', why: 'when a drive was last attached: moves every time a VM starts with it' },
  { name: 'teams.usage_files_cnt', why: 'vault files of the team: moves with every upload and delete' },
  { name: 'teams.usage_files_size', why: 'bytes of the vault files of the team' },
  {
    name: 'teams.usage_drives_used',
    why: 'bytes the team drives consume (the provisioned size, usage_drives_size, is compared)',
  },
  { name: 'resources_by_project.files_cnt', why: 'vault files of the project' },
  { name: 'resources_by_project.files_size', why: 'bytes of the vault files of the project' },
  { name: 'resources_by_project.drives_used', why: 'bytes the project drives consume (drives_size is compared)' },
]);

/** The `--ignore` value that drops the default list. */
const IGNORE_NONE = 'none';

export const DEFAULT_IGNORE: readonly string[] = Object.freeze(VOLATILE_COLUMNS.map((v) => v.name));

export interface IgnoreRules {
  /** The effective list, as given (defaults first), without duplicates. */
  readonly list: string[];
  /** Export name → the non-key columns not compared. */
  readonly byExport: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The effective ignore list: the defaults plus every `--ignore` value, or
 * only the given values when one of them is `none`. Every entry must name a
 * non-key column of the catalog (`column` in any export, or `export.column`);
 * a typo would otherwise silently compare what the user meant to ignore.
 */
export function resolveIgnore(values: readonly string[] | undefined, catalog: readonly ExportDef[]): IgnoreRules {
  const given = (values ?? []).map((v) => v.trim()).filter((v) => v !== '');
  const none = given.some((v) => v.toLowerCase() === IGNORE_NONE);
  const list = [...new Set([...(none ? [] : DEFAULT_IGNORE), ...given.filter((v) => v.toLowerCase() !== IGNORE_NONE)])];
  const byExport = new Map<string, Set<string>>();
  const add = (exp: ExportDef, column: string) => {
    let set = byExport.get(exp.name);
    if (!set) byExport.set(exp.name, (set = new Set()));
    set.add(column);
  };
  for (const entry of list) {
    const dot = entry.indexOf('.');
    if (dot >= 0) {
      const expName = entry.slice(0, dot);
      const column = entry.slice(dot + 1);
      const exp = catalog.find((e) => e.name === expName);
      if (!exp)
        throw new UsageError(
          `--ignore ${entry}: unknown export "${expName}"; valid exports: ${catalog.map((e) => e.name).join(', ')}`,
        );
      if (!exp.columns.some((c) => c.name === column)) {
        throw new UsageError(
          `--ignore ${entry}: export ${expName} has no column "${column}"; its columns: ${exp.columns.map((c) => c.name).join(', ')}`,
        );
      }
      if (exp.key.includes(column))
        throw new UsageError(
          `--ignore ${entry}: ${column} is a key column of ${expName}; records are matched by it, so it cannot be ignored`,
        );
      add(exp, column);
      continue;
    }
    const having = catalog.filter((e) => e.columns.some((c) => c.name === entry));
    if (having.length === 0)
      throw new UsageError(
        `--ignore ${entry}: no export has a column "${entry}" (give a column name as in the export files, or export.column; see docs/exports.md)`,
      );
    const nonKey = having.filter((e) => !e.key.includes(entry));
    if (nonKey.length === 0)
      throw new UsageError(
        `--ignore ${entry}: ${entry} is a key column of ${having.map((e) => e.name).join(', ')}; records are matched by it, so it cannot be ignored`,
      );
    for (const exp of nonKey) add(exp, entry);
  }
  return { list, byExport };
}
