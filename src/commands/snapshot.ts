import { resolveConnection, type ConnectionSettings } from '../config/settings.js';
import { readOptions, type CommandOptions } from '../config/options.js';
import { HttpClient } from '../http/client.js';
import { collect, collectionDate, type CollectDeps } from '../collect/collect.js';
import { markBodyFailures, readCollection } from '../collect/replay.js';
import { SNAPSHOT_MANIFEST, toManifestFile } from '../collect/write.js';
import { diffDirectories, findPreviousSnapshot, formatChangeSet, type ChangeSet } from '../diff/index.js';
import { LARGE_BODY_BYTES, bodiesOnDisk } from '../collect/body-file.js';
import type { RouteRecord } from '../api/route-record.js';
import { build, type BuildSummary } from '../exports/build.js';
import { leanSnapshotMemory, type MemoryPolicy } from '../exports/memory-policy.js';
import { BuildPool, LiveParts, POOL_AVAILABLE, buildInWorkers, checkBuildWorker, poolSummary, type PooledExport } from '../exports/build-pool.js';
import { rawNotWanted, spoolLargeBodies, writeExports, writeRawFirst } from '../publish/snapshot-files.js';
import type { Staging } from '../publish/staging.js';
import type { ManifestExport } from '../exports/manifest.js';
import type { RawCollection } from '../collect/types.js';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { snapshotManifest, type SnapshotManifest } from '../exports/manifest.js';
import { withStaging } from '../publish/index.js';
import { EXIT } from '../cli/errors.js';
import { FailedError, UsageError } from '../errors.js';
import { TOOL } from '../version.js';
import { parseHistoryTarget } from '../history/target.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { summariseRoutes } from './collect.js';
import type { SnapshotSummary } from '../cli/summaries.js';
import { secretMatcher, type SecretMatcher } from '../publish/scan.js';
import { readExportRecords } from '../sheets/snapshot-dir.js';
import { sheetPlan, writeSpreadsheets, type SheetFormat, type WrittenSheetFile } from '../sheets/write.js';
import { checkSheetWorker, hasSheetWorker, SheetHelpers } from '../sheets/sheet-pool.js';
import { EXPORTS } from '../exports/catalog.js';
import { applyKeep, formatPruned } from '../cron/retention.js';
import type { RunReport } from '../cron/metrics.js';
import { escapeControl } from '../util/escape.js';
import { whenInterrupted } from '../publish/registry.js';
import { COLLECTION_MANIFEST } from '../collect/write.js';
import { listedFiles } from '../publish/listed-files.js';
import { signManifest } from '../sign/manifest-signature.js';

type SnapshotOptions = CommandOptions<'snapshot'>;

export { SNAPSHOT_MANIFEST };

export type { SnapshotManifest };

export interface SnapshotOutcome {
  outDir: string;
  manifest: SnapshotManifest;
  durationMs: number;
  /** With --diff-previous: the older snapshot (null when none) and the changes. */
  previous?: { dir: string | null; changes?: ChangeSet };
  /** With --format csv or xlsx: the spreadsheet files published with the exports. */
  spreadsheets?: readonly WrittenSheetFile[];
  /** With --history: the load after publishing. */
  history?: { target: string; status: 'loaded' | 'already loaded' | 'failed'; error?: string };
  /** With --keep: the older snapshots deleted. */
  pruned?: string[];
}

function failedOf(collection: RawCollection): RouteRecord[] {
  return collection.manifest.routes.filter((r) => r.error !== undefined);
}

function failedRoutes(failed: readonly RouteRecord[]): FailedError {
  return new FailedError(
    `${failed.length} route${failed.length > 1 ? 's' : ''} failed, so the snapshot would be incomplete; nothing was published. ` +
      `${failed.map((r) => `${r.route}: ${r.error}`).join('; ')}. Run again later, or pass --allow-partial to publish what was collected (exit 4).`,
  );
}

/** Array bodies of at least this many bytes stay on disk for a pooled build: each worker reads its own, the main thread holds none. */
const POOLED_BODY_BYTES = 256 * 1024;

async function obtainCollection(o: SnapshotOptions, deps: CommandDeps, pooled: boolean) {
  if (o.replay !== undefined) {
    deps.reporter.info(`replaying ${o.replay}`);
    // With --raw, raw/ is written before the build: its bodies are checked now. Otherwise the build's check is used (markBodyFailures).
    const collection = await readCollection(resolveOutDir(deps.cwd, o.replay, o.replay), { checkBodies: o.raw, largeBodyBytes: pooled ? POOLED_BODY_BYTES : deps.largeBodyBytes ?? LARGE_BODY_BYTES });
    return { collection, secrets: [] as readonly string[], source: 'replay' as const };
  }
  const settings = resolveConnection(o, deps.env);
  return { collection: await collectLive(settings, deps), secrets: settings.tokens.secrets, source: 'live' as const };
}

async function collectLive(settings: ConnectionSettings, deps: CommandDeps, extra: Pick<CollectDeps, 'now' | 'onRoute'> = {}): Promise<RawCollection> {
  const abort = new AbortController();
  const http = new HttpClient({ ...settings, userAgent: `${TOOL.name}/${TOOL.version}`, signal: abort.signal }, deps.dispatcher);
  try {
    deps.reporter.info(`collecting from ${settings.baseUrl}`);
    const { collection } = await collect(settings, { http, reporter: deps.reporter, abort, now: deps.now, ...extra });
    return collection;
  } finally {
    await http.close().catch(() => {});
  }
}

/** The staging directory's folder of a live run's bodies waiting for their build (on workers; on the main thread, the large ones). */
const BODY_SPOOL = '.bodies';

interface Built {
  result: BuildSummary & { exports: ManifestExport[] };
  manifest: SnapshotManifest;
  spreadsheets: WrittenSheetFile[] | undefined;
}

/**
 * Worker threads for the spreadsheets: with --build-threads N, the same N
 * (after the build); by default one, beside the build on the main thread
 * (README, Performance), when the bundle has its file: without it they are
 * made on the main thread, as the default asked for no worker.
 */
function spreadsheetWorkers(formats: readonly SheetFormat[], threads: number): number {
  if (formats.length === 0 || !POOL_AVAILABLE) return 0;
  if (threads > 0) return threads;
  return hasSheetWorker() ? 1 : 0;
}

export async function runSnapshot(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const t0 = performance.now();
  const o = readOptions('snapshot', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'snapshot');
  // A bad --format is a usage error before any request is made.
  const formats = o.format;
  // A bad --sign-key is a usage error before any request too.
  const signKey = o.signKey;
  // A bad --history target is a usage error before any request, not a surprise after publishing.
  const historyTarget = o.history !== undefined ? parseHistoryTarget(o.history, deps.cwd) : undefined;
  // Workers only when asked for (--build-threads): made the default for a replay, they made it faster but the time
  // spreadsheets add to it no longer fit their target, and they hold more memory (README, Performance). The same files either way.
  const threads = POOL_AVAILABLE ? o.buildThreads : 0;
  /** Said with what the workers do. */
  const onThreads = threads > 0 ? ` on the main thread and ${threads} worker thread${threads > 1 ? 's' : ''}` : '';
  if (threads > 0) {
    checkBuildWorker();
    if (formats.length > 0) checkSheetWorker();
  }
  const sheetThreads = spreadsheetWorkers(formats, threads);
  /**
   * The spreadsheet workers, started before the build so that it offers
   * them each export as soon as its file is written: beside a build on the
   * main thread, they take exports within a tenth of the collection's size
   * at once while it goes on; beside build workers, none before it ends.
   */
  const startSheets = (staging: Staging, date: string, matcher: SecretMatcher | null, collectionBytes: number): SheetHelpers | undefined => {
    if (sheetThreads === 0) return undefined;
    const earlyKb = threads === 0 ? Math.floor(collectionBytes / 10 / 1024) : 0;
    return new SheetHelpers({ threads: sheetThreads, dir: staging.dir, verify: false, earlyKb }, EXPORTS.length, sheetPlan(date, formats, { secrets: matcher }), (name, chunks) => staging.writeChunks(name, chunks));
  };
  /** Without --allow-partial, a collection with failed routes is refused: nothing is published. */
  const refuseFailed = (collection: RawCollection): void => {
    const failed = failedOf(collection);
    if (failed.length > 0 && !o.allowPartial) throw failedRoutes(failed);
  };
  /** Everything written into the staging directory once the exports are on their way: the checks, the manifest, the spreadsheets. */
  const finish = async (
    staging: Staging,
    collection: RawCollection,
    source: 'live' | 'replay',
    matcher: SecretMatcher | null,
    memory: MemoryPolicy,
    writing: Promise<BuildSummary & { exports: ManifestExport[] }>,
    sheets: SheetHelpers | undefined,
  ): Promise<Built> => {
    const built = await writing;
    // A replayed body that a live run would have refused fails its route the same way.
    if (markBodyFailures(collection, built.bodyFailures).length > 0) refuseFailed(collection);
    const failed = failedOf(collection);
    if (o.strict && built.validation.issues > 0) {
      const samples = built.validation.samples.slice(0, 5).map((s) => `${s.route} record ${s.index} ${s.path}: ${s.message}`);
      throw new FailedError(`--strict: ${built.validation.issues} schema problem${built.validation.issues > 1 ? 's' : ''} in the responses (${samples.join('; ')}); nothing was published`);
    }
    const manifest = snapshotManifest(collection, built, source, o.raw, failed.length === 0);
    let spreadsheets: WrittenSheetFile[] | undefined;
    if (formats.length > 0) {
      deps.reporter.info(`writing ${formats.join(' and ')}${onThreads}`);
      // Read back from the files just written: the same path as `convert`, one export in memory at a time.
      spreadsheets = await writeSpreadsheets({ manifest, records: (e) => readExportRecords(staging.dir, e, { verify: false }) }, formats, (name, chunks) => staging.writeChunks(name, chunks), {
        secrets: matcher,
        beforeRead: memory.beforeSheetRead,
        ...(sheets ? { helpers: sheets } : {}),
      });
    }
    // The files besides the exports are listed with their hashes (verify covers them), and the manifest is signed as written.
    const others = [...(spreadsheets ?? []).map((f) => f.file), ...(o.raw ? [`raw/${COLLECTION_MANIFEST}`] : [])];
    const listed = others.length > 0 ? { ...manifest, files: await listedFiles(staging.dir, others) } : manifest;
    await staging.writeFile(SNAPSHOT_MANIFEST, toManifestFile(listed));
    await signManifest(staging, SNAPSHOT_MANIFEST, signKey);
    return { result: built, manifest: listed, spreadsheets };
  };

  let outDir: string;
  let built: Built;
  if (threads > 0 && o.replay === undefined && !o.raw) {
    // Live, on workers, without raw/: each part is built as soon as its routes are in, beside the downloads still running.
    const settings = resolveConnection(o, deps.env);
    const started = (deps.now ?? (() => new Date()))();
    const date = collectionDate(started);
    outDir = resolveOutDir(deps.cwd, o.outDir, `svc-snapshot-${date}`);
    built = await withStaging(outDir, settings.tokens.secrets, async (staging) => {
      const memory = leanSnapshotMemory(rawNotWanted());
      const pool = new BuildPool(threads, memory.consumeBodies);
      // The bodies wait for their part's worker on disk, not in memory; the directory is gone before publishing.
      const spoolDir = path.join(staging.dir, BODY_SPOOL);
      const parts = new LiveParts(pool, { dir: spoolDir, write: (name, bytes) => staging.writeFile(`${BODY_SPOOL}/${name}`, bytes) });
      let collection: RawCollection | undefined;
      async function* exportsBuilt(): AsyncGenerator<PooledExport, BuildSummary, void> {
        const outcome = yield* pool.exports;
        return poolSummary(outcome, collection!);
      }
      const matcher = secretMatcher(settings.tokens.secrets);
      const sheets = startSheets(staging, date, matcher, 0);
      const writing = writeExports(staging, exportsBuilt(), date, sheets?.offer);
      // A write that fails (a full disk) stops the workers at once; the failure is thrown once the collection is in.
      writing.catch(() => pool.abort(new Error('the export files could not be written')));
      try {
        collection = await collectLive(settings, deps, { now: () => started, onRoute: parts.onRoute });
        refuseFailed(collection);
        deps.reporter.info(`building exports into ${outDir}`);
        await parts.finish(collection);
      } catch (err) {
        pool.abort(err instanceof Error ? err : new Error(String(err)));
        sheets?.stop();
        throw err;
      }
      const done = writing.finally(() => rmSync(spoolDir, { recursive: true, force: true }));
      try {
        return await finish(staging, collection, 'live', matcher, memory, done, sheets);
      } finally {
        sheets?.stop();
      }
    }, 'snapshot');
  } else {
    const { collection, secrets, source } = await obtainCollection(o, deps, threads > 0);
    refuseFailed(collection);
    outDir = resolveOutDir(deps.cwd, o.outDir, `svc-snapshot-${collection.manifest.date}`);
    deps.reporter.info(`building exports into ${outDir}${onThreads}`);
    built = await withStaging(outDir, secrets, async (staging) => {
      // The build consumes the bodies; the policy that lets it exists only once raw/ is written.
      const memory = leanSnapshotMemory(await writeRawFirst(staging, collection, o.raw));
      const matcher = secretMatcher(secrets);
      // A live run's large bodies are read from disk by whoever builds them, as a replay's are, not held in memory:
      // with --raw those just written to raw/, otherwise copies spooled into the staging directory.
      const spooled = source === 'live' && !o.raw;
      if (source === 'live') {
        const minBytes = threads > 0 ? POOLED_BODY_BYTES : deps.largeBodyBytes ?? LARGE_BODY_BYTES;
        const moved = o.raw ? bodiesOnDisk(collection, path.join(staging.dir, 'raw'), minBytes) : await spoolLargeBodies(staging, collection, BODY_SPOOL, minBytes, matcher);
        memory.afterRelease(moved);
      }
      const bytes = collection.manifest.routes.reduce((n, r) => n + (r.bytes ?? 0), 0);
      const sheets = startSheets(staging, collection.manifest.date, matcher, bytes);
      try {
        const exportsBuilt = threads > 0 ? buildInWorkers(collection, memory, threads) : build(collection, memory);
        const written = writeExports(staging, exportsBuilt, collection.manifest.date, sheets?.offer);
        // The spooled bodies are read by the build only: gone before the manifest is written, never published.
        const writing = spooled ? written.finally(() => rmSync(path.join(staging.dir, BODY_SPOOL), { recursive: true, force: true })) : written;
        return await finish(staging, collection, source, matcher, memory, writing, sheets);
      } finally {
        sheets?.stop();
      }
    }, 'snapshot');
  }
  const { result, manifest, spreadsheets } = built;
  // From here on the snapshot is published: a signal leaves it in place.
  whenInterrupted(`the snapshot was published to ${outDir}${historyTarget ? `; a history load in progress is rolled back: load it later with svc-snapshot history load ${outDir}` : ''}`);
  for (const d of result.drift) deps.reporter.warn(`${d.route} returned fields the models do not know: ${d.unknownFields.map(escapeControl).join(', ')}`);
  if (result.validation.issues > 0) deps.reporter.warn(`${result.validation.issues} field(s) of the wrong type were exported as null (see validation in ${SNAPSHOT_MANIFEST})`);
  let previous: SnapshotOutcome['previous'];
  if (o.diffPrevious) {
    // The snapshot is published either way: a diff that cannot be made is reported, not fatal.
    const dir = (await findPreviousSnapshot(outDir)) ?? null;
    previous = { dir };
    if (dir) {
      try {
        previous.changes = await diffDirectories(dir, outDir);
      } catch (err) {
        deps.reporter.warn(`--diff-previous: could not compare with ${dir}: ${(err as Error).message}`);
      }
    } else deps.reporter.warn(`--diff-previous: no older svc-snapshot-* directory beside ${outDir}`);
  }
  let history: SnapshotOutcome['history'];
  if (historyTarget) {
    // Published either way: a failed load is exit 1, and says the snapshot is there to load again.
    try {
      const status = await (await import('./history.js')).loadPublished(outDir, o, deps);
      history = { target: historyTarget.label, status };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      deps.reporter.error(`the snapshot was published to ${outDir}, but loading it into the history database failed: ${message}. Load it later with: svc-snapshot history load ${outDir}`);
      history = { target: historyTarget.label, status: 'failed', error: message };
    }
  }
  // A failed history load makes the run a failure (exit 1): like any failed run, it deletes nothing.
  const pruned = applyKeep(o.keep, manifest.complete && history?.status !== 'failed', outDir, 'snapshot', deps.reporter);
  deps.reporter.close();
  const outcome: SnapshotOutcome = { outDir, manifest, durationMs: Math.round(performance.now() - t0), previous, pruned, ...(spreadsheets ? { spreadsheets } : {}), ...(history ? { history } : {}) };
  deps.stdout(o.json ? `${JSON.stringify(snapshotSummary(outcome), null, 2)}\n` : formatSnapshotSummary(outcome));
  const exitCode = history?.status === 'failed' ? EXIT.failed : manifest.complete ? EXIT.ok : EXIT.incomplete;
  return { exitCode, report: snapshotReport(manifest) };
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

export function snapshotSummary(o: SnapshotOutcome): SnapshotSummary {
  const m = o.manifest;
  const routes = summariseRoutes(m.routes);
  return {
    command: 'snapshot' as const,
    outDir: o.outDir,
    source: m.source,
    baseUrl: m.baseUrl,
    date: m.date,
    complete: m.complete,
    exports: m.exports.map((e) => ({
      export: e.export,
      file: e.file,
      count: e.count,
      available: e.available,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      sha256: e.sha256,
      nullFields: m.nullFields.filter((n) => n.export === e.export).map((n) => n.field),
    })),
    routes: routes.counts,
    skipped: routes.skipped,
    failed: routes.failed,
    validation: { issues: m.validation.issues },
    drift: m.drift,
    ...(o.previous
      ? {
          diffPrevious: {
            previous: o.previous.dir,
            changed: o.previous.changes?.hasChanges ?? false,
            exports: (o.previous.changes?.exports ?? [])
              .filter((e) => e.hasChanges)
              .map((e) => ({
                export: e.export,
                added: e.counts.added,
                removed: e.counts.removed,
                changed: e.counts.changed,
                ...(e.availability === 'older-only' || e.availability === 'newer-only' ? { note: `available only in ${e.availability === 'older-only' ? 'older' : 'newer'}` } : {}),
              })),
          },
        }
      : {}),
    ...(o.spreadsheets ? { spreadsheets: o.spreadsheets.map((f) => ({ format: f.format, file: f.file, ...(f.export !== undefined ? { export: f.export } : {}) })) } : {}),
    ...(o.history ? { history: o.history } : {}),
    ...(o.pruned ? { pruned: o.pruned } : {}),
    durationMs: o.durationMs,
  };
}

function formatSnapshotSummary(o: SnapshotOutcome): string {
  const s = snapshotSummary(o);
  const width = Math.max(...s.exports.map((e) => e.export.length));
  const lines = [`Snapshot (${s.source}) of ${s.baseUrl} written to ${s.outDir}`];
  for (const e of s.exports) {
    const name = e.export.padEnd(width);
    if (!e.available) lines.push(`  ${name}  unavailable: ${e.reason ?? ''}`);
    else lines.push(`  ${name}  ${String(e.count).padStart(7)}${e.nullFields.length ? `  null columns: ${e.nullFields.join(', ')}` : ''}`);
  }
  lines.push(`  routes: ${s.routes.ok} read, ${s.routes.skipped} skipped, ${s.routes.failed} failed`);
  for (const r of s.failed) lines.push(`  FAILED ${r.route}: ${r.error}`);
  if (s.validation.issues > 0) lines.push(`  validation: ${s.validation.issues} field(s) of the wrong type exported as null (see ${SNAPSHOT_MANIFEST})`);
  for (const d of s.drift) lines.push(`  drift: ${d.route} has unknown fields ${d.unknownFields.map(escapeControl).join(', ')}`);
  if (s.spreadsheets) {
    const csv = s.spreadsheets.filter((f) => f.format === 'csv').length;
    if (csv > 0) lines.push(`  csv: ${csv} files, one per export (<count>-<export> (<M>-<D>-<YYYY>).csv)`);
    for (const f of s.spreadsheets.filter((f) => f.format === 'xlsx')) lines.push(`  xlsx: ${f.file}`);
  }
  if (s.history && s.history.status !== 'failed') lines.push(`  history: ${s.history.status} into ${s.history.target}`);
  if (!s.complete) lines.push('  INCOMPLETE: published with --allow-partial (exit 4)');
  lines.push(...formatPruned(s.pruned));
  lines.push(`  done in ${(s.durationMs / 1000).toFixed(1)} s`);
  let text = `${lines.join('\n')}\n`;
  if (o.previous?.changes) text += `\n${formatChangeSet(o.previous.changes)}`;
  else if (o.previous) text += `\nNo older snapshot beside ${o.outDir} to compare with.\n`;
  return text;
}
