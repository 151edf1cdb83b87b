import { isAbsolute, resolve } from 'node:path';
import type { Reporter } from '../progress/reporter.js';
import type { RunReport } from '../cron/metrics.js';

/** What a command may touch of the outside world; tests pass their own. */
export interface CommandDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly reporter: Reporter;
  readonly now: () => Date;
}

export interface CommandResult {
  readonly exitCode: number;
  /** What the run found, for --metrics-file. */
  readonly report?: RunReport;
}

export function resolveOutDir(cwd: string, flag: string | undefined, fallback: string): string {
  const dir = flag ?? fallback;
  return isAbsolute(dir) ? dir : resolve(cwd, dir);
}
