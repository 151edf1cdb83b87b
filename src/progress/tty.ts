import type { RouteRecord } from '../api/route-record.js';
import { forTerminal } from '../util/terminal.js';
import type { Reporter } from './reporter.js';

interface Stream {
  write(s: string): boolean;
  columns?: number;
}

const ESC = '\x1b[';
const HIDE_CURSOR = `${ESC}?25l`;
const SHOW_CURSOR = `${ESC}?25h`;

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/**
 * A live display for a terminal: routes in flight and done, records and bytes
 * so far, elapsed time, redrawn in place; messages scroll above it. Small
 * enough that a dependency would not pay for itself.
 */
export function ttyReporter(stream: Stream, quiet: boolean, now: () => number = () => performance.now()): Reporter {
  const started = now();
  const inFlight = new Set<string>();
  let done = 0;
  let skipped = 0;
  let failed = 0;
  let records = 0;
  let bytes = 0;
  let phase = 'starting';
  let drawnLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const width = () => Math.max(20, (stream.columns ?? 80) - 1);
  const clip = (raw: string, s = forTerminal(raw)) => (s.length > width() ? `${s.slice(0, width() - 1)}…` : s);

  function erase(): void {
    if (drawnLines > 0) stream.write(`\r${ESC}${drawnLines}A${ESC}0J`);
    drawnLines = 0;
  }

  function draw(): void {
    if (quiet || closed) return;
    const secs = ((now() - started) / 1000).toFixed(1);
    const lines = [
      clip(`svc-snapshot: ${phase} — ${done} done, ${inFlight.size} in flight${skipped ? `, ${skipped} skipped` : ''}${failed ? `, ${failed} failed` : ''} — ${records} records, ${formatBytes(bytes)} — ${secs} s`),
      ...[...inFlight].slice(0, 8).map((r) => clip(`  … ${r}`)),
    ];
    if (inFlight.size > 8) lines.push(`  … and ${inFlight.size - 8} more`);
    erase();
    stream.write(`${lines.join('\n')}\n`);
    drawnLines = lines.length;
  }

  function message(text: string): void {
    if (closed) {
      stream.write(`${forTerminal(text)}\n`);
      return;
    }
    erase();
    stream.write(`${forTerminal(text)}\n`);
    draw();
  }

  function ensureTimer(): void {
    if (timer || quiet || closed) return;
    stream.write(HIDE_CURSOR);
    timer = setInterval(draw, 100);
    timer.unref();
  }

  return {
    routeStarted(route) {
      inFlight.add(route);
      ensureTimer();
    },
    routeDone(record: RouteRecord, count?: number) {
      inFlight.delete(record.route);
      if (record.skipped) skipped++;
      else if (record.error) {
        failed++;
        message(`svc-snapshot: failed ${record.route}: ${record.error}`);
      } else done++;
      records += count ?? 0;
      bytes += record.bytes ?? 0;
    },
    info(text) {
      phase = text;
      ensureTimer();
    },
    warn(text) {
      if (!quiet) message(`svc-snapshot: warning: ${text}`);
    },
    error(text) {
      message(`svc-snapshot: error: ${text}`);
    },
    close() {
      if (closed) return;
      if (timer) {
        clearInterval(timer);
        timer = undefined;
        erase();
        stream.write(SHOW_CURSOR);
      }
      closed = true;
    },
  };
}
