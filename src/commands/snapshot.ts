import { FailedError } from '../cli/errors.js';
import type { CommandDeps, CommandResult } from './context.js';

export interface SnapshotFlags {
  [key: string]: unknown;
}

export async function runSnapshot(_flags: SnapshotFlags, _deps: CommandDeps): Promise<CommandResult> {
  throw new FailedError('snapshot: not implemented yet');
}
