import { FailedError } from '../cli/errors.js';
import type { CommandDeps, CommandResult } from './context.js';

export interface AuditFlags {
  [key: string]: unknown;
}

export async function runAudit(_flags: AuditFlags, _deps: CommandDeps): Promise<CommandResult> {
  throw new FailedError('audit: not implemented yet');
}
