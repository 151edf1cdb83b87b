import path from 'node:path';
import type { SheetFormat } from '../config/values.js';
import { readOptions, type CommandOptions } from '../config/options.js';
import { nightsAround, type Nights } from '../night/index.js';
import { rerunText } from '../snapshot/beside.js';
import { nightCounts } from '../findings/counts.js';
import { withStaging } from '../publish/index.js';
import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { isSameOrAncestor, real } from '../publish/target.js';
import { parseHistoryTarget, type HistoryTarget } from '../history/target.js';
import { endedWaiverWarnings, snapshotFindingsSettings, failOnMessage, findingsLine } from '../findings/index.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import {
  formatSnapshotSummary,
  snapshotRunReport,
  snapshotSummary,
  type SnapshotOutcome,
} from '../summaries/snapshot.js';
import { secretMatcher } from '../publish/scan.js';
import { applyKeep } from '../cron/retention.js';
import { whenInterrupted } from '../publish/registry.js';
import { snapshotNotice } from '../notify/notice.js';
import {
  comparesPrevious,
  fillStaging,
  refuseFailed,
  reportHistory,
  warnAboutResponses,
  type SnapshotPlan,
  type Staged,
  archivePlanOf,
  archiveOrProblem,
} from '../night/fill.js';
import { obtainCollection, type Spooling } from '../collect/obtain.js';
import { diffWithPrevious, namedForText } from '../night/changes.js';

type SnapshotOptions = CommandOptions<'snapshot'>;

/** The default command (README.md, "The two commands"): a live snapshot is a collection followed by the same build a replay runs. */
export async function runSnapshot(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const t0 = performance.now();
  const plan = planSnapshot(flags, deps);
  // A live run's large bodies arrive into a spool beside the output (made once the tokens are known); the build reads them there.
  const spool: Spooling = { parent: path.dirname(resolveOutDir(deps.cwd, plan.o.outDir, 'svc-snapshot')) };
  try {
    return await snapshotWith(spool, plan, deps, t0);
  } finally {
    spool.made?.remove();
  }
}

async function snapshotWith(
  spool: Spooling,
  plan: SnapshotPlan,
  deps: CommandDeps,
  t0: number,
): Promise<CommandResult> {
  const { collection, secrets, source } = await obtainCollection(plan.o, deps, plan.largeBodyBytes, spool);
  deps.facts?.collection(collection);
  refuseFailed(collection, plan.o.allowPartial);
  const outDir = resolveOutDir(deps.cwd, plan.o.outDir, `svc-snapshot-${collection.manifest.date}`);
  if (plan.o.replay !== undefined) refuseReplayInside(resolveOutDir(deps.cwd, plan.o.replay, plan.o.replay), outDir);
  const m = collection.manifest;
  const history = plan.historyTarget && reportHistory(plan.historyTarget, plan.o, deps);
  const nights = await nightsAround(outDir, m, history, (w) => deps.reporter.warn(w));
  if (nights.rerun)
    deps.reporter.warn(`${rerunText(nights.rerun)}: published as a re-run, nothing sent to Alertmanager`);
  deps.reporter.info(`building exports into ${outDir}`);
  const input = { plan, deps, collection, source, outDir, ...(nights.rerun ? { rerun: nights.rerun } : {}) };
  const staged = await withStaging(
    outDir,
    secrets,
    (staging) => fillStaging(staging, { ...input, matcher: secretMatcher(secrets) }),
    'snapshot',
    (m) => deps.reporter.warn(m),
  );
  // Read by the build only: gone before the history load and the rest.
  spool.made?.remove();
  // From here on the snapshot is published: a signal leaves it in place.
  const load = plan.historyTarget
    ? `; a history load in progress is rolled back: load it later with svc-snapshot history load ${outDir}`
    : '';
  whenInterrupted(`the snapshot was published to ${outDir}${load}`);
  return afterPublishing(staged, plan, deps, { outDir, nights }, t0);
}

/**
 * A replayed collection inside the directory the snapshot replaces (a
 * snapshot's own raw/, replayed into that snapshot) would be deleted with
 * it: the only copy of what the server answered.
 */
function refuseReplayInside(replay: string, outDir: string): void {
  if (isSameOrAncestor(real(outDir), real(replay)))
    throw new UsageError(
      `--replay ${replay} lies inside ${outDir}, which this snapshot replaces: the collection would be deleted with ` +
        'it; give another --out-dir, or copy the collection out of it first',
    );
}

/** What the options ask, checked before any request. */
function planSnapshot(flags: RawFlags, deps: CommandDeps): SnapshotPlan {
  const o = readOptions('snapshot', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'snapshot');
  // A bad --format, --include or --history target (a password in the URL) is a usage error before any request, not a surprise after publishing.
  const formats = o.format.filter((f): f is SheetFormat => f !== 'html');
  const html = (o.format as readonly string[]).includes('html');
  const { findingsAsked, problems } = snapshotFindingsSettings(o, html);
  for (const p of problems)
    deps.reporter.error(`${p}; the snapshot is published without the waivers, and the run exits 2 at the end`);
  // An option is parsed when first read: --include is checked here, and --sign-key's secret is known to the token scan before anything is written.
  const { include, signKey } = o;
  const archive = archivePlanOf(o, deps);
  // A directory taken as the target is said once the snapshot is published (a target that cannot be opened is exit 1).
  const historyTarget =
    o.history !== undefined ? parseHistoryTarget(o.history, deps.cwd, { directory: 'when opened' }) : undefined;
  return {
    o,
    formats,
    html,
    findingsAsked,
    problems,
    include,
    signKey,
    historyTarget,
    archive,
    // Array bodies of at least this many bytes wait on disk for the build (a replay's stay where they are).
    ...(deps.largeBodyBytes !== undefined ? { largeBodyBytes: deps.largeBodyBytes } : {}),
  };
}

/** Once published: the warnings, the diff, the history load, the retention, the summary and the exit code. */
async function afterPublishing(
  staged: Staged,
  plan: SnapshotPlan,
  deps: CommandDeps,
  { outDir, nights }: { readonly outDir: string; readonly nights: Nights },
  t0: number,
): Promise<CommandResult> {
  const { built, manifest, spreadsheets, findings, report, compared } = staged;
  const o = plan.o;
  warnAboutResponses(built, deps.reporter);
  const previous = comparesPrevious(o, deps)
    ? await diffWithPrevious(
        { outDir, manifest, beside: nights.beside },
        o.diffPrevious ? deps.reporter : undefined,
        report?.previous ?? compared,
      )
    : undefined;
  const history = plan.historyTarget ? await loadIntoHistory(outDir, o, deps, plan.historyTarget) : undefined;
  if (findings) deps.reporter.info(findingsLine(findings));
  for (const w of findings ? endedWaiverWarnings(findings) : []) deps.reporter.warn(w);
  const findingsFailed = findings ? failOnMessage(findings, plan.findingsAsked.failOn) : undefined;
  if (findingsFailed) deps.reporter.warn(findingsFailed);
  const unarchived = await archiveOrProblem(plan, outDir, deps.reporter);
  const problems = unarchived !== undefined ? [...plan.problems, unarchived] : plan.problems;
  // A failed history load makes the run a failure (exit 1): like any failed run, it deletes nothing.
  const pruned = applyKeep(
    o.keep,
    manifest.complete && history?.status !== 'failed',
    outDir,
    'snapshot',
    deps.reporter,
  );
  deps.reporter.close();
  const outcome: SnapshotOutcome = {
    outDir,
    manifest,
    durationMs: Math.round(performance.now() - t0),
    previous,
    pruned,
    ...(spreadsheets ? { spreadsheets } : {}),
    ...(history ? { history } : {}),
    ...(findings ? { findings: nightCounts(findings) } : {}),
    ...(nights.rerun ? { rerun: nights.rerun } : {}),
    ...(problems.length > 0 ? { problems } : {}),
  };
  // The text names users and teams as people read them; --json keeps the exact ids.
  const named = o.diffPrevious && !o.json && previous ? await namedForText(previous, outDir) : previous;
  const shown = o.diffPrevious ? { ...outcome, previous: named } : { ...outcome, previous: undefined };
  deps.stdout(o.json ? `${JSON.stringify(snapshotSummary(shown), null, 2)}\n` : formatSnapshotSummary(shown));
  // 6 only for a complete snapshot: an incomplete one is 4 whatever its findings.
  // A problem in the configuration of what comes after publishing: exit 2, once everything else is done.
  const exitCode =
    history?.status === 'failed'
      ? EXIT.failed
      : problems.length > 0
        ? EXIT.usage
        : !manifest.complete
          ? EXIT.incomplete
          : findingsFailed
            ? EXIT.findings
            : EXIT.ok;
  const notice = snapshotNotice(manifest, {
    outDir,
    exitCode,
    ...(report ? { reportFile: path.join(outDir, report.name) } : {}),
    ...(previous ? { previous } : {}),
    ...(findings ? { findings } : {}),
    ...(nights.rerun ? { rerun: nights.rerun } : {}),
    ...(problems.length > 0 ? { problems } : {}),
  });
  return { exitCode, report: snapshotRunReport(manifest, findings), notice };
}

/** --history: published either way, a failed load is exit 1 and says the snapshot is there to load again. */
async function loadIntoHistory(
  outDir: string,
  o: SnapshotOptions,
  deps: CommandDeps,
  target: HistoryTarget,
): Promise<NonNullable<SnapshotOutcome['history']>> {
  try {
    const status = await (await import('./history.js')).loadPublished(outDir, target, o, deps);
    return { target: target.label, status };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    deps.reporter.error(
      `the snapshot was published to ${outDir}, but loading it into the history database failed: ${message}. Load it ` +
        `later with: svc-snapshot history load ${outDir}`,
    );
    return { target: target.label, status: 'failed', error: message };
  }
}
