import { resolve } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { differentSites, diffDirectories, formatChangeSet } from '../diff/index.js';
import { readOptions } from '../config/options.js';
import type { CommandDeps, CommandResult, RawFlags } from './context.js';

/** `svc-snapshot diff <older> <newer>` (docs/diff.md). */
export async function runDiff(rawFlags: RawFlags, args: readonly string[], deps: CommandDeps): Promise<CommandResult> {
  const flags = readOptions('diff', rawFlags, deps.env);
  if (args.length !== 2) throw new UsageError('diff needs two directories: svc-snapshot diff <older> <newer>');
  const [older, newer] = args.map((a) => resolve(deps.cwd, a)) as [string, string];
  deps.reporter.info(`comparing ${older} with ${newer}`);
  const changes = await diffDirectories(older, newer, {
    ...(flags.export !== undefined ? { exports: flags.export } : {}),
    ...(flags.ignore !== undefined ? { ignore: flags.ignore } : {}),
    include: flags.include,
  });
  if (differentSites(changes)) {
    deps.reporter.warn(
      `the two sides come from different sites: ${changes.older.baseUrl} and ${changes.newer.baseUrl}`,
    );
  }
  deps.reporter.close();
  deps.stdout(flags.json ? `${JSON.stringify(changes, null, 2)}\n` : formatChangeSet(changes));
  return { exitCode: changes.hasChanges ? EXIT.changed : EXIT.ok };
}
