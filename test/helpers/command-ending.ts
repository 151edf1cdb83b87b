import { expect } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import type { CommandDeps, CommandResult } from '../../src/commands/context.js';
import { DomainError } from '../../src/errors.js';
import { captureDeps } from './history-fixtures.js';
import { tmpDir } from './run-cli.js';

/** What a command run in process ended with: its exit code, and the message of its error or what it printed. */
export async function ending(
  run: (deps: CommandDeps) => Promise<CommandResult>,
): Promise<{ code: number; said: string }> {
  const io = captureDeps(tmpDir());
  try {
    const result = await run(io.deps);
    return { code: result.exitCode, said: `${io.out()}${io.err()}` };
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return { code: exitCodeOf(err as DomainError), said: (err as Error).message };
  }
}
