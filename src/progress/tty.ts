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
  return new TtyReporter(stream, quiet, now);
}

/** Routes listed under the status line; more are counted. */
const SHOWN_IN_FLIGHT = 8;

class TtyReporter implements Reporter {
  private readonly started: number;
  private readonly inFlight = new Set<string>();
  private done = 0;
  private skipped = 0;
  private failed = 0;
  private records = 0;
  private bytes = 0;
  private phase = 'starting';
  private drawnLines = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly stream: Stream,
    private readonly quiet: boolean,
    private readonly now: () => number,
  ) {
    this.started = now();
  }

  routeStarted(route: string): void {
    this.inFlight.add(route);
    this.ensureTimer();
  }

  routeDone(record: RouteRecord, count?: number): void {
    this.inFlight.delete(record.route);
    if (record.skipped) this.skipped++;
    else if (record.error) {
      this.failed++;
      this.message(`svc-snapshot: failed ${record.route}: ${record.error}`);
    } else this.done++;
    this.records += count ?? 0;
    this.bytes += record.bytes ?? 0;
  }

  info(text: string): void {
    this.phase = text;
    this.ensureTimer();
  }

  warn(text: string): void {
    if (!this.quiet) this.message(`svc-snapshot: warning: ${text}`);
  }

  error(text: string): void {
    this.message(`svc-snapshot: error: ${text}`);
  }

  close(): void {
    if (this.closed) return;
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.erase();
      this.stream.write(SHOW_CURSOR);
    }
    this.closed = true;
  }

  private width(): number {
    return Math.max(20, (this.stream.columns ?? 80) - 1);
  }

  private clip(raw: string): string {
    const s = forTerminal(raw);
    return s.length > this.width() ? `${s.slice(0, this.width() - 1)}…` : s;
  }

  private statusLine(): string {
    const secs = ((this.now() - this.started) / 1000).toFixed(1);
    const skipped = this.skipped ? `, ${this.skipped} skipped` : '';
    const failed = this.failed ? `, ${this.failed} failed` : '';
    const routes = `${this.done} done, ${this.inFlight.size} in flight${skipped}${failed}`;
    return `svc-snapshot: ${this.phase} — ${routes} — ${this.records} records, ${formatBytes(this.bytes)} — ${secs} s`;
  }

  private erase(): void {
    if (this.drawnLines > 0) this.stream.write(`\r${ESC}${this.drawnLines}A${ESC}0J`);
    this.drawnLines = 0;
  }

  private draw(): void {
    if (this.quiet || this.closed) return;
    const lines = [
      this.clip(this.statusLine()),
      ...[...this.inFlight].slice(0, SHOWN_IN_FLIGHT).map((r) => this.clip(`  … ${r}`)),
    ];
    if (this.inFlight.size > SHOWN_IN_FLIGHT) lines.push(`  … and ${this.inFlight.size - SHOWN_IN_FLIGHT} more`);
    this.erase();
    this.stream.write(`${lines.join('\n')}\n`);
    this.drawnLines = lines.length;
  }

  /** A line scrolling above the display, which is drawn again below it (once closed, the line alone). */
  private message(text: string): void {
    if (!this.closed) this.erase();
    this.stream.write(`${forTerminal(text)}\n`);
    this.draw();
  }

  private ensureTimer(): void {
    if (this.timer || this.quiet || this.closed) return;
    this.stream.write(HIDE_CURSOR);
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref();
  }
}
