/**
 * Exit codes live here and nowhere else (CONTRACT section 6). Commands throw
 * these; the single top-level catch in `main` turns them into an exit code.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  tokenRejected: 3,
  incomplete: 4,
  changed: 5,
  sigint: 130,
  sigterm: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** Bad flags, environment or files named by the user: exit 2. */
export class UsageError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT.usage, options);
  }
}

/** The run failed; nothing was published: exit 1. */
export class FailedError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT.failed, options);
  }
}

/** A token was refused with 401/403: exit 3. */
export class TokenRejectedError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT.tokenRejected, options);
  }
}

/** The run was stopped by a signal: exit 130 or 143. */
export class InterruptedError extends CliError {
  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}; nothing was published`, signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
  }
}
