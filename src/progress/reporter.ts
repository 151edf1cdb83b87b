import type { RouteRecord } from '../api/route-record.js';
import { forTerminal } from '../util/terminal.js';

/** Where commands report progress; stderr in the CLI, a recorder in tests. */
export interface Reporter {
  routeStarted(route: string): void;
  routeDone(record: RouteRecord, records?: number): void;
  /** A route whose token was refused (401/403): it ends the run (exit 3) without a record of its own. */
  routeRefused?(route: string): void;
  /** A phase or notable event, e.g. "publishing …". */
  info(message: string): void;
  /** Not an error: skipped 3.14.1 routes, drift. Silent with --quiet. */
  warn(message: string): void;
  /** Always shown, even with --quiet. */
  error(message: string): void;
  /** Clears any live display before the summary is printed. */
  close(): void;
}

function describeRecord(r: RouteRecord, records?: number): string {
  if (r.skipped) return `skipped ${r.route}: ${r.reason ?? ''}`;
  if (r.error) return `failed  ${r.route}: ${r.error}`;
  const count = records === undefined ? '' : `, ${records} record${records === 1 ? '' : 's'}`;
  return (
    `ok      ${r.route} (${r.status}, ${r.bytes ?? 0} bytes${count}, ${r.durationMs ?? 0} ` +
    `ms${r.attempts && r.attempts > 1 ? `, ${r.attempts} attempts` : ''})`
  );
}

/** One plain line per finished route or phase, no control characters: for cron, pipes, CI. */
export function plainReporter(write: (line: string) => void, quiet: boolean): Reporter {
  const out = (line: string) => write(`${forTerminal(line)}\n`);
  return {
    routeStarted() {},
    routeDone(record, records) {
      if (!quiet) out(`svc-snapshot: ${describeRecord(record, records)}`);
    },
    info(message) {
      if (!quiet) out(`svc-snapshot: ${message}`);
    },
    warn(message) {
      if (!quiet) out(`svc-snapshot: warning: ${message}`);
    },
    error(message) {
      out(`svc-snapshot: error: ${message}`);
    },
    close() {},
  };
}

export const silentReporter: Reporter = plainReporter(() => {}, true);
