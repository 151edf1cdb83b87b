import type { RequestHandler } from 'msw';
import type { CommandDeps } from '../../src/commands/context.js';
import { plainReporter } from '../../src/progress/reporter.js';
import { MswDispatcher } from './msw-dispatcher.js';

export interface InProcessRun {
  deps: CommandDeps;
  dispatcher: MswDispatcher;
  /** What the command wrote on stdout so far. */
  stdout(): string;
  /** The reporter's lines (stderr in the CLI). */
  stderr(): string;
}

/**
 * What a command needs to run inside the test process: the fake's msw
 * handlers behind an undici dispatcher, an environment of exactly `env` (no
 * SVC_* variable of the developer's shell), and stdout and stderr captured.
 */
export function inProcess(
  handlers: readonly RequestHandler[],
  opts: { env?: NodeJS.ProcessEnv; cwd: string; now?: () => Date },
): InProcessRun {
  let out = '';
  let err = '';
  const dispatcher = new MswDispatcher(handlers);
  return {
    dispatcher,
    deps: {
      env: opts.env ?? {},
      cwd: opts.cwd,
      stdout: (text) => (out += text),
      reporter: plainReporter((line) => (err += line), false),
      now: opts.now ?? (() => new Date()),
      dispatcher,
    },
    stdout: () => out,
    stderr: () => err,
  };
}
