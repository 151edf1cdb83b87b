/**
 * A short-lived child process run to the end while this one waits: what a
 * signal handler sends (the failure ping, the interrupted run's digest) must
 * be sent without returning to the event loop, where the run would go on.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs the script `script` with `input` as JSON on its stdin (never in its arguments or environment), waiting at most `timeoutMs`. */
export function runChildSync(script: URL, input: unknown, timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [fileURLToPath(script)], {
    input: JSON.stringify(input),
    timeout: timeoutMs,
    stdio: ['pipe', 'pipe', 'ignore'],
    encoding: 'utf8',
  });
}
