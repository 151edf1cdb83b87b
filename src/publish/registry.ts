import { existsSync, renameSync, rmSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { InterruptedError } from '../errors.js';

/**
 * Process-wide record of what a run has on disk but not yet published: live
 * staging directories, and the backup of a previous target while it is being
 * replaced. A signal handler or an exit hook can then leave the disk as it was
 * before the run (README.md, "Output").
 */
const stagingDirs = new Set<string>();
/** backup path → the target it was renamed from */
const backups = new Map<string, string>();

export function registerStaging(dir: string): void {
  stagingDirs.add(dir);
}

export function unregisterStaging(dir: string): void {
  stagingDirs.delete(dir);
}

export function isLiveStaging(dir: string): boolean {
  return stagingDirs.has(dir);
}

export function registerBackup(backup: string, target: string): void {
  backups.set(backup, target);
}

export function unregisterBackup(backup: string): void {
  backups.delete(backup);
}

/**
 * Removes every live staging directory and puts back any previous target
 * whose replacement did not finish. Synchronous so that it can run from a
 * signal handler or `process.on('exit')`; each step is attempted even if
 * another one fails.
 */
export function cleanupAllSync(): void {
  for (const dir of stagingDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
      stagingDirs.delete(dir);
    } catch {
      // Best effort: keep going so the other directories are still removed.
    }
  }
  for (const [backup, target] of backups) {
    try {
      if (existsSync(backup)) {
        // Put back where the replacement did not finish; with the new target in place, the previous run's output.
        if (!existsSync(target)) renameSync(backup, target);
        else rmSync(backup, { recursive: true, force: true });
      }
      backups.delete(backup);
    } catch {
      // Best effort, as above.
    }
  }
}

/**
 * The output directories this run set out to publish (a staging directory was
 * made for each) and those it did publish: what a failed run's --json object
 * says was and was not published.
 */
const ledger = { targets: new Set<string>(), published: new Set<string>() };

export function noteTarget(target: string): void {
  ledger.targets.add(target);
}

export function notePublished(target: string): void {
  noteTarget(target);
  ledger.published.add(target);
}

/** What was published and what was not, by output directory, in the order the run began them. */
export function publishLedger(): { published: string[]; notPublished: string[] } {
  return {
    published: [...ledger.published],
    notPublished: [...ledger.targets].filter((t) => !ledger.published.has(t)),
  };
}

/** A new run (main) starts a new ledger. */
export function resetPublishLedger(): void {
  ledger.targets.clear();
  ledger.published.clear();
}

/** What an interruption would leave behind now, when it is not "nothing was published" (whenInterrupted's text). */
let outcome: string | undefined;

export function currentOutcome(): string | undefined {
  return outcome;
}

type Signal = 'SIGINT' | 'SIGTERM';
/** Returns the exit code to end with; anything else keeps the shell's 128 + signal number. */
export type OnSignal = (signal: Signal, error: InterruptedError) => unknown;

let installed: { onSignal: OnSignal | undefined; uninstall: () => void } | undefined;

/**
 * Says what a signal arriving from now on leaves behind (a history load in
 * progress is rolled back, a snapshot already published stays), or, with
 * undefined, that it is again "nothing was published".
 */
export function whenInterrupted(text: string | undefined): void {
  outcome = text;
}

/**
 * On SIGINT or SIGTERM: clean up synchronously, call `onSignal` (the CLI
 * restores the terminal, prints `error.message`), then exit with the code
 * it returns (128 + the signal's number, 130 or 143, when it returns none).
 * Also cleans up on any process exit, in case a run ends without discarding.
 * Installing again only replaces `onSignal`. Returns a function that removes
 * the handlers.
 */
export function installSignalHandlers(onSignal?: OnSignal): () => void {
  if (installed) {
    installed.onSignal = onSignal;
    return installed.uninstall;
  }
  const handle = (signal: Signal): void => {
    cleanupAllSync();
    const error = new InterruptedError(signal, outcome);
    let code = 128 + osConstants.signals[signal];
    try {
      const chosen = installed?.onSignal?.(signal, error);
      if (typeof chosen === 'number') code = chosen;
    } catch {
      // The exit code matters more than the callback's failure.
    }
    // The one place besides `main` that ends the process: a signal handler has
    // no caller to throw to.
    process.exit(code);
  };
  const onInt = (): void => handle('SIGINT');
  const onTerm = (): void => handle('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('exit', cleanupAllSync);
  const uninstall = (): void => {
    outcome = undefined;
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('exit', cleanupAllSync);
    installed = undefined;
  };
  installed = { onSignal, uninstall };
  return uninstall;
}
