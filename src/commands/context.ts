import { isAbsolute, resolve } from 'node:path';
import type { Dispatcher } from 'undici';
import type { Reporter } from '../progress/reporter.js';
import type { RunReport } from '../cron/metrics.js';
import type { RunFacts } from '../cron/facts.js';
import type { RunNotice } from '../notify/digest.js';
import { assertReplaceable, assertSafeTarget, type OutputKind } from '../publish/target.js';
import { checkKeepTarget } from '../cron/keep.js';
import { noteTarget } from '../publish/registry.js';

/** The flags of a command as commander gives them; readOptions reads them with the environment. */
export type RawFlags = Readonly<Record<string, unknown>>;

/** What a command may touch of the outside world; tests pass their own. */
export interface CommandDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly reporter: Reporter;
  readonly now: () => Date;
  /** Answers the HTTP requests instead of a new undici Agent: tests run commands in-process against the fake's handlers. */
  readonly dispatcher?: Dispatcher;
  /** Array bodies of at least this many bytes wait on disk for the build, not in memory (default LARGE_BODY_BYTES; tests pass less). */
  readonly largeBodyBytes?: number;
  /** What the run has learnt so far (site, routes, the build's counts), for the metrics of a run that fails or is interrupted. */
  readonly facts?: RunFacts;
}

export interface CommandResult {
  readonly exitCode: number;
  /** What the run found, for --metrics-file. */
  readonly report?: RunReport;
  /** What the run's digest tells (--notify, src/notify): a run that throws is told from its error instead. */
  readonly notice?: RunNotice;
}

export function resolveOutDir(cwd: string, flag: string | undefined, fallback: string): string {
  const dir = flag ?? fallback;
  return isAbsolute(dir) ? dir : resolve(cwd, dir);
}

/**
 * `--out-dir` and `--keep` are checked before any request: an unsafe or
 * foreign directory, or a --keep with an output directory whose name holds
 * no date, is a usage error at once, not after a long collection.
 */
export function checkOutputOptions(
  cwd: string,
  o: { readonly outDir: string | undefined; readonly keep?: number | undefined },
  kind: OutputKind,
): void {
  checkKeepTarget(o.keep, o.outDir);
  if (o.outDir === undefined) return;
  assertSafeTarget(o.outDir, cwd);
  assertReplaceable(resolveOutDir(cwd, o.outDir, o.outDir), kind);
  // What a failed run's --json object names as not published (failureSummary, src/cli/main.ts).
  noteTarget(resolveOutDir(cwd, o.outDir, o.outDir));
}
