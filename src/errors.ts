/**
 * The errors of every layer below the CLI. Each says what went wrong and what
 * to do, never how the process ends: the CLI's one top-level catch
 * (src/cli/main.ts) turns them into exit codes (README.md, "Exit codes"), so a
 * library function can be called from a test, a command or another tool
 * without deciding the exit code of whoever called it.
 */
export abstract class DomainError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad flags, environment or files named by the user. */
export class UsageError extends DomainError {}

/** The run failed; nothing was published. */
export class FailedError extends DomainError {}

/** A token was refused with 401/403. */
export class TokenRejectedError extends DomainError {}

/** The run was stopped by a signal. */
export class InterruptedError extends DomainError {
  /** `outcome`: what the interrupted run leaves behind, when it is not "nothing was published". */
  constructor(
    readonly signal: 'SIGINT' | 'SIGTERM',
    outcome = 'nothing was published',
  ) {
    super(`interrupted by ${signal}; ${outcome}`);
  }
}

/**
 * A value read, or, given `problems`, its usage error said there and
 * undefined instead: configuration that concerns only what comes after
 * publishing costs a line, not the run.
 */
export function readOrProblem<T>(read: () => T, problems: string[] | undefined): T | undefined {
  if (!problems) return read();
  try {
    return read();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    problems.push(err.message);
    return undefined;
  }
}
