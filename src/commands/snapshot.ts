import path from 'node:path';
import { resolveConnection } from '../config/settings.js';
import { readOptions, type CommandOptions } from '../config/options.js';
import { withHttpClient } from '../http/client.js';
import { collect } from '../collect/collect.js';
import { markBodyFailures, readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST, toManifestFile } from '../collect/write.js';
import { SNAPSHOT_MANIFEST, stagedSnapshot } from '../snapshot/dir.js';
import { diffDirectories, previousSnapshotBeside, type ChangeSet } from '../diff/index.js';
import { LARGE_BODY_BYTES } from '../body/file.js';
import type { RouteRecord } from '../api/route-record.js';
import { build, type BuildSummary } from '../exports/build.js';
import { leanSnapshotMemory, type MemoryPolicy } from '../exports/memory-policy.js';
import { writeExports, writeRawFirst } from '../snapshot/files.js';
import { largeBodiesToDisk } from '../snapshot/spool.js';
import { BodySpool } from '../collect/body-spool.js';
import type { RawCollection } from '../collect/types.js';
import { snapshotManifest, type SnapshotManifest } from '../exports/manifest.js';
import { withStaging } from '../publish/index.js';
import type { Staging } from '../publish/staging.js';
import { EXIT } from '../exit-codes.js';
import { FailedError, UsageError } from '../errors.js';
import { isSameOrAncestor, real } from '../publish/target.js';
import { parseHistoryTarget, type HistoryTarget } from '../history/target.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { summariseRoutes } from '../summaries/routes.js';
import { formatSnapshotSummary, snapshotSummary, type SnapshotOutcome } from '../summaries/snapshot.js';
import { secretMatcher } from '../publish/scan.js';
import { writeSpreadsheets, type SheetSink } from '../sheets/write.js';
import { applyKeep } from '../cron/retention.js';
import { planArchive, writeArchive } from '../archive/write.js';
import type { RunReport } from '../cron/metrics.js';
import type { Reporter } from '../progress/reporter.js';
import { escapeControl } from '../util/escape.js';
import { whenInterrupted } from '../publish/registry.js';
import { hashingWriter } from '../snapshot/listed-files.js';
import { signManifest } from '../sign/manifest-signature.js';
import {
  FINDINGS_CSV,
  FINDINGS_FILE,
  checkFindingsOptions,
  failOnMessage,
  findingCounts,
  findingsLine,
  findingsOf,
  overTime,
  unevaluatedRules,
  writeFindingsFile,
} from '../findings/index.js';
import { findingsCsvChunks } from '../findings/csv.js';
import { previousFindings, type PreviousFindings } from '../findings/lifecycle.js';
import type { FindingsReport } from '../findings/evaluate.js';
import { previousFromHistory } from '../history/previous-findings.js';
import { comparedBeside, nightsOfStaging, stagingReport } from '../report/index.js';
import { trustStore } from '../config/values.js';
import { snapshotNotice } from '../notify/notice.js';

type SnapshotOptions = CommandOptions<'snapshot'>;

/** The default command (CONTRACT section 5): a live snapshot is a collection followed by the same build a replay runs. */
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

/** Where a live run's spool of large bodies goes, and the spool once made. */
interface Spooling {
  readonly parent: string;
  made?: BodySpool;
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
  deps.reporter.info(`building exports into ${outDir}`);
  const input = { plan, deps, collection, source, outDir };
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
  return afterPublishing(staged, plan, deps, outDir, t0);
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

type SnapshotPlan = ReturnType<typeof planSnapshot>;

/** What the options ask, checked before any request. */
function planSnapshot(flags: RawFlags, deps: CommandDeps) {
  const o = readOptions('snapshot', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'snapshot');
  // A bad --format, --include or --history target (a password in the URL) is a usage error before any request, not a surprise after publishing.
  const formats = o.format.filter((f) => f !== 'html');
  const html = (o.format as readonly string[]).includes('html');
  const findingsAsked = checkFindingsOptions(o, html);
  // An option is parsed when first read: --include is checked here, and --sign-key's secret is known to the token scan before anything is written.
  const { include, signKey } = o;
  // A directory taken as the target is said once the snapshot is published (CONTRACT section 11: a target that cannot be opened is exit 1).
  const historyTarget =
    o.history !== undefined ? parseHistoryTarget(o.history, deps.cwd, { directory: 'when opened' }) : undefined;
  return {
    o,
    formats,
    html,
    findingsAsked,
    include,
    signKey,
    historyTarget,
    archive: planArchive(o.encryptTo, deps.env),
    // Array bodies of at least this many bytes wait on disk for the build (a replay's stay where they are).
    largeBodyBytes: deps.largeBodyBytes ?? LARGE_BODY_BYTES,
  };
}

interface StagingInput {
  readonly plan: SnapshotPlan;
  readonly deps: CommandDeps;
  readonly collection: RawCollection;
  readonly source: 'live' | 'replay';
  readonly outDir: string;
  /** The tokens, looked for in every file written. */
  readonly matcher: ReturnType<typeof secretMatcher>;
}

type HashingWriter = ReturnType<typeof hashingWriter>;

/** The staging directory's contents: raw/ when asked, the exports, the files beside them, and the manifest that lists them, signed. */
async function fillStaging(staging: Staging, input: StagingInput) {
  const hashed = hashingWriter(staging);
  const { built, manifest, memory } = await buildIntoStaging(staging, input, hashed);
  const { spreadsheets, findings, report, compared } = await writeBeside(staging, input, manifest, memory, hashed);
  // The files besides the exports are listed in the manifest with their hashes as written (verify covers them).
  const others = [
    ...(spreadsheets ?? []).map((f) => f.file),
    ...(findings ? [FINDINGS_FILE] : []),
    ...(findings && input.plan.formats.includes('csv') ? [FINDINGS_CSV] : []),
    ...(report ? [report.name] : []),
    ...(input.plan.o.raw ? [`raw/${COLLECTION_MANIFEST}`] : []),
  ];
  const listed =
    others.length > 0
      ? { ...manifest, files: others.map((name) => hashed.files.find((f) => f.name === name)!) }
      : manifest;
  await staging.writeFile(SNAPSHOT_MANIFEST, toManifestFile(listed));
  await signManifest(staging, SNAPSHOT_MANIFEST, input.plan.signKey);
  return { built, manifest: listed, spreadsheets, findings, report, compared };
}

/** raw/ when asked, then the exports built and written, the failed routes and --strict checked again, and the manifest made. */
async function buildIntoStaging(
  staging: Staging,
  { plan, deps, collection, source, matcher }: StagingInput,
  hashed: HashingWriter,
) {
  const o = plan.o;
  // What the build may release and when: the bodies once read, which only a written raw/ (or none asked for) allows.
  const memory = leanSnapshotMemory(await writeRawFirst(staging, collection, o.raw, hashed));
  // A live run's large bodies are read from disk by the build, as a replay's are: raw/'s files, or copies spooled into staging.
  const onDisk =
    source === 'live'
      ? await largeBodiesToDisk(staging, collection, { raw: o.raw, minBytes: plan.largeBodyBytes, matcher })
      : undefined;
  memory.afterRelease(onDisk?.bytes ?? 0);
  const built = await writeExports(staging, build(collection, memory, plan.include), collection.manifest.date);
  deps.facts?.build(built);
  // The spooled bodies are read by the build only: gone before the manifest is written, never published.
  onDisk?.remove();
  // A replayed body that a live run would have refused fails its route the same way.
  if (markBodyFailures(collection, built.bodyFailures).length > 0) {
    deps.facts?.collection(collection);
    refuseFailed(collection, o.allowPartial);
  }
  refuseStrict(o.strict, built.validation);
  const manifest = snapshotManifest(collection, built, source, o.raw, failedOf(collection).length === 0, plan.include);
  return { built, manifest, memory };
}

/** The spreadsheets, _findings.json and the report page, each hashed as it is written for the manifest's files. */
async function writeBeside(
  staging: Staging,
  input: StagingInput,
  manifest: SnapshotManifest,
  memory: MemoryPolicy,
  hashed: HashingWriter,
) {
  const { plan, deps } = input;
  const { o, formats, html } = plan;
  if (formats.length > 0) deps.reporter.info(`writing ${formats.join(' and ')}`);
  // Read back from the files just written: the same path as `convert`, one export in memory at a time.
  const written = stagedSnapshot(staging.dir, manifest);
  const sink: SheetSink = (name, chunks) => hashed.writeChunks(name, chunks);
  const sheetOptions = { secrets: input.matcher, beforeRead: memory.beforeSheetRead };
  const spreadsheets = formats.length > 0 ? await writeSpreadsheets(written, formats, sink, sheetOptions) : undefined;
  // --findings and --format html: the rules over the export files just written, at the manifest's time, once the build's garbage is collected.
  if (o.findings || html) memory.beforeFindingsRead();
  const current = () => findingsOf(stagedSnapshot(staging.dir, manifest), plan.findingsAsked);
  const toldAgainst = async (before: PreviousFindings | undefined) =>
    findingsOverTime(await current(), before, input, manifest.baseUrl);
  const warn = (m: string) => deps.reporter.warn(m);
  // --format html: the page's comparison with the night before also gives that night's findings (its files read
  // once); the snapshot's own are evaluated after that night's, so that the two nights' records are not held at once.
  const beside = { outDir: input.outDir, findings: toldAgainst, evaluate: plan.findingsAsked, warn };
  const page = html
    ? await stagingReport({ dir: staging.dir, writeFile: hashed.writeFile }, manifest, {
        ...beside,
        ...(plan.signKey ? { signKey: plan.signKey } : {}),
        ...(plan.historyTarget ? { history: reportHistory(plan.historyTarget, o, deps) } : {}),
      })
    : undefined;
  // --findings with --diff-previous or --notify (no page): the comparison they make is made here, for the same reason.
  const nights =
    !html && o.findings && comparesPrevious(o, deps) ? await nightsOfStaging(staging.dir, manifest, beside) : undefined;
  const evaluated =
    page?.findings ??
    nights?.report ??
    (o.findings ? await findingsBeside(await current(), input, warn, manifest.baseUrl) : undefined);
  // --findings: written before the manifest, which lists _findings.json (and with --format csv _findings.csv) in its files.
  const findings = o.findings ? evaluated : undefined;
  if (findings) await writeFindingsFile(hashed, findings);
  if (findings && formats.includes('csv')) await hashed.writeChunks(FINDINGS_CSV, findingsCsvChunks(findings));
  // --format html: the report page (src/report), after the files it reads and before the manifest that lists it.
  const report = page ? await page.write() : undefined;
  return { spreadsheets, findings, report, compared: nights && comparedBeside(input.outDir, nights.previous) };
}

/** --diff-previous, and --notify (it tells each export's changes since the previous snapshot too, compared quietly). */
function comparesPrevious(o: SnapshotOptions, deps: CommandDeps): boolean {
  return o.diffPrevious === true || (o.notify?.length ?? 0) > 0 || (deps.env.SVC_NOTIFY_FILE ?? '') !== '';
}

/** The findings of the snapshot in staging told against the newest older snapshot's beside it (--findings without a comparison). */
async function findingsBeside(
  current: FindingsReport,
  input: StagingInput,
  warn: (m: string) => void,
  baseUrl: string,
) {
  const asked = input.plan.findingsAsked;
  const beside = { dir: input.outDir, time: current.time, baseUrl };
  const before = await previousFindings({ beside, warn }, findingsOf, asked);
  return findingsOverTime(current, before, input, baseUrl);
}

/**
 * The findings of the snapshot in staging told against the night before's (the newest older snapshot beside its
 * directory; else, with --history, the newest earlier night in the database), with the waivers.
 */
async function findingsOverTime(
  current: FindingsReport,
  before: PreviousFindings | undefined,
  input: StagingInput,
  baseUrl: string,
): Promise<FindingsReport> {
  const { plan, deps } = input;
  const previous =
    before ??
    (plan.historyTarget
      ? await previousFromHistory(reportHistory(plan.historyTarget, plan.o, deps), baseUrl, current.time, (m) =>
          deps.reporter.warn(m),
        )
      : undefined);
  return overTime(current, previous, plan.findingsAsked);
}

/** The history the report page reads its trends from. */
function reportHistory(target: HistoryTarget, o: SnapshotOptions, deps: CommandDeps) {
  return { target, ...(target.engine === 'postgres' ? { ca: trustStore(o.caFile, deps.env) } : {}) };
}

type Staged = Awaited<ReturnType<typeof fillStaging>>;

/** Once published: the warnings, the diff, the history load, the retention, the summary and the exit code. */
async function afterPublishing(
  staged: Staged,
  plan: SnapshotPlan,
  deps: CommandDeps,
  outDir: string,
  t0: number,
): Promise<CommandResult> {
  const { built, manifest, spreadsheets, findings, report, compared } = staged;
  const o = plan.o;
  warnAboutResponses(built, deps.reporter);
  const previous = comparesPrevious(o, deps)
    ? await diffWithPrevious(outDir, manifest, o.diffPrevious ? deps.reporter : undefined, report?.previous ?? compared)
    : undefined;
  const history = plan.historyTarget ? await loadIntoHistory(outDir, o, deps, plan.historyTarget) : undefined;
  if (findings) deps.reporter.info(findingsLine(findings));
  const findingsFailed = findings ? failOnMessage(findings, plan.findingsAsked.failOn) : undefined;
  if (findingsFailed) deps.reporter.warn(findingsFailed);
  await writeArchive(plan.archive, outDir, 'snapshot', plan.signKey, deps.reporter, o.debug);
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
  };
  const shown = o.diffPrevious ? outcome : { ...outcome, previous: undefined };
  deps.stdout(o.json ? `${JSON.stringify(snapshotSummary(shown), null, 2)}\n` : formatSnapshotSummary(shown));
  // 6 only for a complete snapshot: an incomplete one is 4 whatever its findings.
  const exitCode =
    history?.status === 'failed'
      ? EXIT.failed
      : !manifest.complete
        ? EXIT.incomplete
        : findingsFailed
          ? EXIT.findings
          : EXIT.ok;
  const findingsReport = findings
    ? { findings: findingCounts(findings), findingsUnevaluated: unevaluatedRules(findings) }
    : {};
  const notice = snapshotNotice(manifest, {
    outDir,
    exitCode,
    ...(report ? { reportFile: path.join(outDir, report.name) } : {}),
    ...(previous ? { previous } : {}),
    ...(findings ? { findings } : {}),
  });
  return { exitCode, report: { ...snapshotReport(manifest), ...findingsReport }, notice };
}

/** The raw collection: read back from --replay's directory, or collected from the server. */
async function obtainCollection(
  o: SnapshotOptions,
  deps: CommandDeps,
  largeBodyBytes: number,
  spooling: Spooling,
): Promise<{ collection: RawCollection; secrets: readonly string[]; source: 'live' | 'replay' }> {
  if (o.replay !== undefined) {
    deps.reporter.info(`replaying ${o.replay}`);
    // With --raw, raw/ is written before the build: its bodies are checked now. Otherwise the build's check is used (markBodyFailures).
    const collection = await readCollection(resolveOutDir(deps.cwd, o.replay, o.replay), {
      checkBodies: o.raw,
      largeBodyBytes,
    });
    return { collection, secrets: [], source: 'replay' };
  }
  const settings = resolveConnection(o, deps.env);
  const abort = new AbortController();
  return withHttpClient({ ...settings, signal: abort.signal }, deps.dispatcher, async (http) => {
    deps.reporter.info(`collecting from ${settings.baseUrl}`);
    const spool = (spooling.made = new BodySpool(spooling.parent, settings.tokens.secrets));
    const { collection } = await collect(settings, { http, reporter: deps.reporter, abort, now: deps.now, spool });
    return { collection, secrets: settings.tokens.secrets, source: 'live' };
  });
}

function failedOf(collection: RawCollection): RouteRecord[] {
  return collection.manifest.routes.filter((r) => r.error !== undefined);
}

/** Without --allow-partial, a collection with failed routes is refused: nothing is published. */
function refuseFailed(collection: RawCollection, allowPartial: boolean): void {
  const failed = failedOf(collection);
  if (failed.length === 0 || allowPartial) return;
  throw new FailedError(
    `${failed.length} route${failed.length > 1 ? 's' : ''} failed, so the snapshot would be incomplete; nothing was published. ` +
      `${failed.map((r) => `${r.route}: ${r.error}`).join('; ')}. Run again later, or pass --allow-partial to publish what was collected (exit 4).`,
  );
}

/** With --strict, any schema problem in the responses is fatal. */
function refuseStrict(strict: boolean, validation: BuildSummary['validation']): void {
  if (!strict || validation.issues === 0) return;
  const samples = validation.samples.slice(0, 5).map((s) => `${s.route} record ${s.index} ${s.path}: ${s.message}`);
  throw new FailedError(
    `--strict: ${validation.issues} schema problem${validation.issues > 1 ? 's' : ''} in the responses ` +
      `(${samples.join('; ')}); nothing was published`,
  );
}

function warnAboutResponses(built: BuildSummary, reporter: Reporter): void {
  for (const d of built.drift)
    reporter.warn(
      `${d.route} returned fields the models do not know: ${d.unknownFields.map(escapeControl).join(', ')}`,
    );
  const n = built.validation.issues;
  if (n > 0)
    reporter.warn(
      `${n} validation issue${n === 1 ? '' : 's'} in the responses: fields of the wrong type (exported as null), ` +
        `undocumented values, records naming another realm than their route (see validation in ${SNAPSHOT_MANIFEST})`,
    );
}

/**
 * --diff-previous: the snapshot is published either way, so a diff that cannot be made is reported, not fatal.
 * The previous snapshot is the newest older one of the same site: a newer one of another site passed over is said.
 */
async function diffWithPrevious(
  outDir: string,
  manifest: SnapshotManifest,
  reporter: Reporter | undefined,
  shown?: { dir: string; changes: ChangeSet },
): Promise<NonNullable<SnapshotOutcome['previous']>> {
  const beside = await previousSnapshotBeside(outDir, manifest);
  const dir = beside.dir ?? null;
  const other = beside.otherSite && `${path.basename(beside.otherSite.dir)}, is of ${beside.otherSite.baseUrl}`;
  if (!dir) {
    reporter?.warn(
      other
        ? `--diff-previous: no older snapshot of ${manifest.baseUrl} beside ${outDir} (the newest older one, ${other})`
        : `--diff-previous: no older svc-snapshot-* directory beside ${outDir}`,
    );
    return { dir };
  }
  if (other)
    reporter?.info(`--diff-previous: the newest older snapshot beside, ${other}; compared with ${dir} instead`);
  // --format html compared the same two snapshots for its page (the same options): not again.
  if (shown && path.resolve(shown.dir) === path.resolve(dir)) return { dir, changes: shown.changes };
  try {
    return { dir, changes: await diffDirectories(dir, outDir) };
  } catch (err) {
    reporter?.warn(`--diff-previous: could not compare with ${dir}: ${(err as Error).message}`);
    return { dir };
  }
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

/** The figures --metrics-file reports for a published snapshot. */
function snapshotReport(m: SnapshotManifest): RunReport {
  const routes = summariseRoutes(m.routes).counts;
  return {
    records: m.exports.map((e) => ({ export: e.export, count: e.count })),
    routes: { read: routes.ok, skipped: routes.skipped, failed: routes.failed },
    validationIssues: m.validation.issues,
    driftFields: m.drift.reduce((n, d) => n + d.unknownFields.length, 0),
  };
}
