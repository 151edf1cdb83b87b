import type { RouteRecord } from '../api/route-record.js';
import type { Reporter } from '../progress/reporter.js';
import type { RunReport } from './metrics.js';

type RouteCounts = { read: number; skipped: number; failed: number };

function stateOf(r: Pick<RouteRecord, 'skipped' | 'error'>): keyof RouteCounts {
  if (r.error !== undefined) return 'failed';
  return r.skipped ? 'skipped' : 'read';
}

/** The figures of a build that a run's metrics report. */
interface BuildFigures {
  readonly exports: ReadonlyArray<{ export: string; records?: readonly unknown[]; count?: number }>;
  readonly validation: { issues: number };
  readonly drift: ReadonlyArray<{ unknownFields: readonly string[] }>;
}

/**
 * What a run has learnt so far, for the metrics file of a run that fails or
 * is interrupted (the routes by state always, the
 * records, validation and drift counts where the build got that far). The
 * command tells it as it goes (`deps.facts`); the routes are counted as they
 * end through the reporter (`countRoutes`), so a run stopped mid-collection
 * still says what it read and what failed.
 */
export class RunFacts {
  /** The site the run is about (its base URL), once the command knows it. */
  site: string | undefined;
  private readonly counted: RouteCounts = { read: 0, skipped: 0, failed: 0 };
  private routes: RouteCounts | undefined;
  private built: Pick<RunReport, 'records' | 'validationIssues' | 'driftFields'> | undefined;

  /** One route ended (live). */
  routeDone(r: Pick<RouteRecord, 'skipped' | 'error'>): void {
    this.counted[stateOf(r)]++;
  }

  /** A request of a run without route records (audit) ended. */
  requestDone(state: keyof RouteCounts): void {
    this.counted[state]++;
  }

  /** The routes of a collection as it stands (a replay's, or a live one after the build refused a body): they replace the count. */
  collection(c: { manifest: { baseUrl: string; routes: readonly RouteRecord[] } }): void {
    this.site = c.manifest.baseUrl;
    const counts: RouteCounts = { read: 0, skipped: 0, failed: 0 };
    for (const r of c.manifest.routes) counts[stateOf(r)]++;
    this.routes = counts;
  }

  /** The build's figures, once it is done (before anything is checked or published). */
  build(b: BuildFigures): void {
    this.built = {
      records: b.exports.map((e) => ({ export: e.export, count: e.count ?? e.records?.length ?? 0 })),
      validationIssues: b.validation.issues,
      driftFields: b.drift.reduce((n, d) => n + d.unknownFields.length, 0),
    };
  }

  /** What is known now: the routes always, the build's figures if it ended. */
  report(): RunReport {
    return { routes: { ...(this.routes ?? this.counted) }, ...this.built };
  }
}

/** `inner`, with every route that ends counted into `facts`. */
export function countRoutes(inner: Reporter, facts: RunFacts): Reporter {
  return {
    routeStarted: (route) => inner.routeStarted(route),
    routeDone: (record, records) => {
      facts.routeDone(record);
      inner.routeDone(record, records);
    },
    routeRefused: (route) => {
      facts.routeDone({ error: 'token refused' });
      inner.routeRefused?.(route);
    },
    info: (m) => inner.info(m),
    warn: (m) => inner.warn(m),
    error: (m) => inner.error(m),
    close: () => inner.close(),
  };
}
