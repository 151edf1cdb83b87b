import path from 'node:path';
import { resolveConnection } from '../config/settings.js';
import { readOptions, type CommandOptions } from '../config/options.js';
import { HttpClient } from '../http/client.js';
import { collect } from '../collect/collect.js';
import { markBodyFailures, readCollection } from '../collect/replay.js';
import { COLLECTION_MANIFEST, SNAPSHOT_MANIFEST, toManifestFile } from '../collect/write.js';
import { diffDirectories, findPreviousSnapshot, type ChangeSet } from '../diff/index.js';
import { LARGE_BODY_BYTES } from '../body/file.js';
import type { RouteRecord } from '../api/route-record.js';
import { build, type BuildSummary } from '../exports/build.js';
import { leanSnapshotMemory } from '../exports/memory-policy.js';
import { writeExports, writeRawFirst } from '../snapshot/files.js';
import { largeBodiesToDisk } from '../snapshot/spool.js';
import type { RawCollection } from '../collect/types.js';
import { snapshotManifest, type SnapshotManifest } from '../exports/manifest.js';
import { withStaging } from '../publish/index.js';
import { EXIT } from '../exit-codes.js';
import { FailedError } from '../errors.js';
import { TOOL } from '../version.js';
import { parseHistoryTarget, type HistoryTarget } from '../history/target.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { summariseRoutes } from '../summaries/routes.js';
import { formatSnapshotSummary, snapshotSummary, type SnapshotOutcome } from '../summaries/snapshot.js';
import { secretMatcher } from '../publish/scan.js';
import { readExportRecords } from '../sheets/snapshot-dir.js';
import { writeSpreadsheets } from '../sheets/write.js';
import { applyKeep } from '../cron/retention.js';
import type { RunReport } from '../cron/metrics.js';
import type { Reporter } from '../progress/reporter.js';
import { escapeControl } from '../util/escape.js';
import { whenInterrupted } from '../publish/registry.js';
import { hashingWriter, listedFiles } from '../snapshot/listed-files.js';
import { signManifest } from '../sign/manifest-signature.js';
import { FINDINGS_FILE, checkFindingsOptions, failOnMessage, findingCounts, findingsLine, findingsOfStaging, writeFindingsFile } from '../findings/index.js';
import { writeStagingReport } from '../report/index.js';
import { trustStore } from '../config/values.js';

type SnapshotOptions = CommandOptions<'snapshot'>;


/**
 * A snapshot, in order: the settings; the collection (from the network, or
 * read back with --replay: a live snapshot is a collection followed by the
 * same build a replay runs); failed routes refused; then, in the staging
 * directory, raw/ when asked, the exports built and written, the strict
 * check, the manifest, the spreadsheets and the manifest file; publishing;
 * and after it the diff, the history load, the retention and the summary.
 */
export async function runSnapshot(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const t0 = performance.now();
  const o = readOptions('snapshot', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'snapshot');
  checkFindingsOptions(o);
  // A bad --format, --include or --history target is a usage error before any request, not a surprise after publishing.
  const formats = o.format.filter((f) => f !== 'html');
  const html = (o.format as readonly string[]).includes('html');
  const include = o.include;
  const signKey = o.signKey;
  const historyTarget = o.history !== undefined ? parseHistoryTarget(o.history, deps.cwd) : undefined;
  /** Array bodies of at least this many bytes wait on disk for the build (a replay's stay where they are). */
  const largeBodyBytes = deps.largeBodyBytes ?? LARGE_BODY_BYTES;

  const { collection, secrets, source } = await obtainCollection(o, deps, largeBodyBytes);
  deps.facts?.collection(collection);
  refuseFailed(collection, o.allowPartial);
  const outDir = resolveOutDir(deps.cwd, o.outDir, `svc-snapshot-${collection.manifest.date}`);
  deps.reporter.info(`building exports into ${outDir}`);

  const { built, manifest, spreadsheets, findings, report } = await withStaging(outDir, secrets, async (staging) => {
    const matcher = secretMatcher(secrets);
    // What the build may release and when: the bodies once read, which only a written raw/ (or none asked for) allows.
    const memory = leanSnapshotMemory(await writeRawFirst(staging, collection, o.raw));
    // A live run's large bodies are read from disk by the build, as a replay's are: raw/'s files, or copies spooled into staging.
    const onDisk = source === 'live' ? await largeBodiesToDisk(staging, collection, { raw: o.raw, minBytes: largeBodyBytes, matcher }) : undefined;
    memory.afterRelease(onDisk?.bytes ?? 0);
    const built = await writeExports(staging, build(collection, memory, include), collection.manifest.date);
    deps.facts?.build(built);
    // The spooled bodies are read by the build only: gone before the manifest is written, never published.
    onDisk?.remove();
    // A replayed body that a live run would have refused fails its route the same way.
    if (markBodyFailures(collection, built.bodyFailures).length > 0) {
      deps.facts?.collection(collection);
      refuseFailed(collection, o.allowPartial);
    }
    refuseStrict(o.strict, built.validation);
    const manifest = snapshotManifest(collection, built, source, o.raw, failedOf(collection).length === 0, include);
    if (formats.length > 0) deps.reporter.info(`writing ${formats.join(' and ')}`);
    // The spreadsheets and _findings.json are hashed as they are written, for the manifest's files.
    const hashed = hashingWriter(staging);
    // Read back from the files just written: the same path as `convert`, one export in memory at a time.
    const spreadsheets =
      formats.length > 0
        ? await writeSpreadsheets({ manifest, records: (e) => readExportRecords(staging.dir, e, { verify: false }) }, formats, (name, chunks) => hashed.writeChunks(name, chunks), { secrets: matcher, beforeRead: memory.beforeSheetRead })
        : undefined;
    // --findings and --format html: the rules over the export files just written, at the manifest's time, once the build's garbage is collected.
    const evaluated = o.findings || html ? await findingsOfStaging(staging.dir, manifest, o.expiringDays, memory.beforeFindingsRead) : undefined;
    // --findings: written before the manifest, which lists _findings.json in its files.
    const findings = o.findings ? evaluated : undefined;
    if (findings) await writeFindingsFile(hashed, findings);
    // --format html: the report page (src/report), after the files it reads and before the manifest that lists it.
    const report = html && evaluated ? await writeStagingReport(staging, manifest, { outDir, findings: evaluated, ...(signKey ? { signKey } : {}), ...(historyTarget ? { history: { target: historyTarget, ...(historyTarget.engine === 'postgres' ? { ca: trustStore(o.caFile, deps.env) } : {}) } } : {}) }) : undefined;
    // The files besides the exports are listed with their hashes (verify covers them), and the manifest is signed as written.
    const others = [...(spreadsheets ?? []).map((f) => f.file), ...(findings ? [FINDINGS_FILE] : []), ...(report ? [report.name] : []), ...(o.raw ? [`raw/${COLLECTION_MANIFEST}`] : [])];
    const listed = others.length > 0 ? { ...manifest, files: await listedFiles(staging.dir, others, hashed.files) } : manifest;
    await staging.writeFile(SNAPSHOT_MANIFEST, toManifestFile(listed));
    await signManifest(staging, SNAPSHOT_MANIFEST, signKey);
    return { built, manifest: listed, spreadsheets, findings, report };
  }, 'snapshot');

  // From here on the snapshot is published: a signal leaves it in place.
  whenInterrupted(`the snapshot was published to ${outDir}${historyTarget ? `; a history load in progress is rolled back: load it later with svc-snapshot history load ${outDir}` : ''}`);
  warnAboutResponses(built, deps.reporter);
  const previous = o.diffPrevious ? await diffWithPrevious(outDir, deps.reporter, report?.previous) : undefined;
  const history = historyTarget ? await loadIntoHistory(outDir, o, deps, historyTarget) : undefined;
  if (findings) deps.reporter.info(findingsLine(findings));
  const findingsFailed = findings ? failOnMessage(findings, o.failOn) : undefined;
  if (findingsFailed) deps.reporter.warn(findingsFailed);
  // A failed history load makes the run a failure (exit 1): like any failed run, it deletes nothing.
  const pruned = applyKeep(o.keep, manifest.complete && history?.status !== 'failed', outDir, 'snapshot', deps.reporter);
  deps.reporter.close();
  const outcome: SnapshotOutcome = { outDir, manifest, durationMs: Math.round(performance.now() - t0), previous, pruned, ...(spreadsheets ? { spreadsheets } : {}), ...(history ? { history } : {}) };
  deps.stdout(o.json ? `${JSON.stringify(snapshotSummary(outcome), null, 2)}\n` : formatSnapshotSummary(outcome));
  // 6 only for a complete snapshot: an incomplete one is 4 whatever its findings.
  const exitCode = history?.status === 'failed' ? EXIT.failed : !manifest.complete ? EXIT.incomplete : findingsFailed ? EXIT.findings : EXIT.ok;
  return { exitCode, report: { ...snapshotReport(manifest), ...(findings ? { findings: findingCounts(findings) } : {}) } };
}

/** The raw collection: read back from --replay's directory, or collected from the server. */
async function obtainCollection(o: SnapshotOptions, deps: CommandDeps, largeBodyBytes: number): Promise<{ collection: RawCollection; secrets: readonly string[]; source: 'live' | 'replay' }> {
  if (o.replay !== undefined) {
    deps.reporter.info(`replaying ${o.replay}`);
    // With --raw, raw/ is written before the build: its bodies are checked now. Otherwise the build's check is used (markBodyFailures).
    const collection = await readCollection(resolveOutDir(deps.cwd, o.replay, o.replay), { checkBodies: o.raw, largeBodyBytes });
    return { collection, secrets: [], source: 'replay' };
  }
  const settings = resolveConnection(o, deps.env);
  const abort = new AbortController();
  const http = new HttpClient({ ...settings, userAgent: `${TOOL.name}/${TOOL.version}`, signal: abort.signal }, deps.dispatcher);
  try {
    deps.reporter.info(`collecting from ${settings.baseUrl}`);
    const { collection } = await collect(settings, { http, reporter: deps.reporter, abort, now: deps.now });
    return { collection, secrets: settings.tokens.secrets, source: 'live' };
  } finally {
    await http.close().catch(() => {});
  }
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
  throw new FailedError(`--strict: ${validation.issues} schema problem${validation.issues > 1 ? 's' : ''} in the responses (${samples.join('; ')}); nothing was published`);
}

function warnAboutResponses(built: BuildSummary, reporter: Reporter): void {
  for (const d of built.drift) reporter.warn(`${d.route} returned fields the models do not know: ${d.unknownFields.map(escapeControl).join(', ')}`);
  if (built.validation.issues > 0) reporter.warn(`${built.validation.issues} field(s) of the wrong type were exported as null (see validation in ${SNAPSHOT_MANIFEST})`);
}

/** --diff-previous: the snapshot is published either way, so a diff that cannot be made is reported, not fatal. */
async function diffWithPrevious(outDir: string, reporter: Reporter, shown?: { dir: string; changes: ChangeSet }): Promise<NonNullable<SnapshotOutcome['previous']>> {
  const dir = (await findPreviousSnapshot(outDir)) ?? null;
  if (!dir) {
    reporter.warn(`--diff-previous: no older svc-snapshot-* directory beside ${outDir}`);
    return { dir };
  }
  // --format html compared the same two snapshots for its page (the same options): not again.
  if (shown && path.resolve(shown.dir) === path.resolve(dir)) return { dir, changes: shown.changes };
  try {
    return { dir, changes: await diffDirectories(dir, outDir) };
  } catch (err) {
    reporter.warn(`--diff-previous: could not compare with ${dir}: ${(err as Error).message}`);
    return { dir };
  }
}

/** --history: published either way, a failed load is exit 1 and says the snapshot is there to load again. */
async function loadIntoHistory(outDir: string, o: SnapshotOptions, deps: CommandDeps, target: HistoryTarget): Promise<NonNullable<SnapshotOutcome['history']>> {
  try {
    const status = await (await import('./history.js')).loadPublished(outDir, o, deps);
    return { target: target.label, status };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    deps.reporter.error(`the snapshot was published to ${outDir}, but loading it into the history database failed: ${message}. Load it later with: svc-snapshot history load ${outDir}`);
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
