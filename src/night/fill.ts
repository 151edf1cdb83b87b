/**
 * Tonight in its staging directory: raw/ when asked, the exports built and
 * written, then what is told against the night before (the spreadsheets,
 * `_findings.json`, the report page), and the manifest that lists them all,
 * signed. The snapshot command publishes what this fills.
 */
import { planArchive, writeArchive, type ArchivePlan } from '../archive/write.js';
import type { CommandOptions } from '../config/options.js';
import { markBodyFailures } from '../collect/replay.js';
import { COLLECTION_MANIFEST, toManifestFile } from '../collect/write.js';
import { SNAPSHOT_MANIFEST, stagedSnapshot } from '../snapshot/dir.js';
import type { Rerun } from '../snapshot/beside.js';
import type { RouteRecord } from '../api/route-record.js';
import { build, type BuildSummary } from '../exports/build.js';
import { leanSnapshotMemory, type MemoryPolicy } from '../exports/memory-policy.js';
import { writeExports, writeRawFirst } from '../snapshot/files.js';
import type { RawCollection } from '../collect/types.js';
import { snapshotManifest } from '../exports/manifest.js';
import type { SnapshotManifest } from '../manifests.js';
import type { Staging } from '../publish/staging.js';
import { FailedError, UsageError } from '../errors.js';
import type { HistoryTarget } from '../history/target.js';

import { secretMatcher } from '../publish/scan.js';
import { writeSpreadsheets, type SheetSink } from '../sheets/write.js';
import type { Reporter } from '../progress/reporter.js';
import { escapeControl } from '../util/escape.js';
import { hashingWriter } from '../snapshot/listed-files.js';
import { signManifest } from '../sign/manifest-signature.js';
import { FINDINGS_CSV, FINDINGS_FILE, findingsOf, overTime, writeFindingsFile } from '../findings/index.js';
import { findingsCsvChunks } from '../findings/csv.js';
import { previousFindings, type PreviousFindings } from '../findings/lifecycle.js';
import type { FindingsReport } from '../findings/evaluate.js';
import { previousFromHistory } from '../history/previous-findings.js';
import { comparedBeside, nightsOfStaging, stagingReport } from '../report/index.js';
import { trustStore, type SheetFormat } from '../config/values.js';
import type { FindingsSettings } from '../findings/index.js';
import type { RunFacts } from '../cron/facts.js';

type SnapshotOptions = CommandOptions<'snapshot'>;

/** What the snapshot command's options ask, checked before any request. */
export interface SnapshotPlan {
  readonly o: SnapshotOptions;
  /** The spreadsheet formats (--format without html). */
  readonly formats: readonly SheetFormat[];
  readonly html: boolean;
  readonly findingsAsked: FindingsSettings;
  /** Problems of the configuration of what comes after publishing (the waivers file): exit 2 at the end. */
  readonly problems: readonly string[];
  readonly include: SnapshotOptions['include'];
  readonly signKey: SnapshotOptions['signKey'];
  readonly historyTarget: HistoryTarget | undefined;
  /** --encrypt-to and SVC_ENCRYPT_TO_FILE: the recipients of the archive written after publishing, or their problem. */
  readonly archive: ArchivePlan;
  /** Array bodies of at least this many bytes wait on disk for the build (a replay's stay where they are); default LARGE_BODY_BYTES. */
  readonly largeBodyBytes?: number;
}

/** What filling the staging directory uses of the command's dependencies. */
export interface StagingDeps {
  readonly reporter: Reporter;
  readonly env: NodeJS.ProcessEnv;
  readonly facts?: RunFacts;
}

export interface StagingInput {
  readonly plan: SnapshotPlan;
  readonly deps: StagingDeps;
  readonly collection: RawCollection;
  readonly source: 'live' | 'replay';
  readonly outDir: string;
  /** The tokens, looked for in every file written. */
  readonly matcher: ReturnType<typeof secretMatcher>;
  readonly rerun?: Rerun;
}

type HashingWriter = ReturnType<typeof hashingWriter>;

/** The staging directory's contents: raw/ when asked, the exports, the files beside them, and the manifest that lists them, signed. */
export async function fillStaging(staging: Staging, input: StagingInput) {
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
  { plan, deps, collection, source }: StagingInput,
  hashed: HashingWriter,
) {
  const o = plan.o;
  // What the build may release and when: the bodies once read, which only a written raw/ (or none asked for) allows.
  const memory = leanSnapshotMemory(await writeRawFirst(staging, collection, o.raw, hashed));
  const built = await writeExports(staging, build(collection, memory, plan.include), collection.manifest.date);
  deps.facts?.build(built);
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
        ...(input.rerun ? { rerun: input.rerun } : {}),
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
export function comparesPrevious(o: SnapshotOptions, deps: StagingDeps): boolean {
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
export function reportHistory(target: HistoryTarget, o: SnapshotOptions, deps: StagingDeps) {
  return { target, ...(target.engine === 'postgres' ? { ca: trustStore(o.caFile, deps.env) } : {}) };
}

export type Staged = Awaited<ReturnType<typeof fillStaging>>;

function failedOf(collection: RawCollection): RouteRecord[] {
  return collection.manifest.routes.filter((r) => r.error !== undefined);
}

/** Without --allow-partial, a collection with failed routes is refused: nothing is published. */
export function refuseFailed(collection: RawCollection, allowPartial: boolean): void {
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

export function warnAboutResponses(built: BuildSummary, reporter: Reporter): void {
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

/** --encrypt-to and SVC_ENCRYPT_TO_FILE read before anything is collected: recipients that cannot be used are said now. */
export function archivePlanOf(o: SnapshotOptions, deps: StagingDeps): ArchivePlan {
  const archive = planArchive(o.encryptTo, deps.env);
  if (archive?.problem)
    deps.reporter.error(`${archive.problem.message}; the snapshot is published without its archive, exit 2 at the end`);
  return archive;
}

/** The archive written once published; a recipient that cannot be used costs the archive and a line (the problem), not the night. */
export async function archiveOrProblem(
  plan: SnapshotPlan,
  outDir: string,
  reporter: Reporter,
): Promise<string | undefined> {
  try {
    await writeArchive(plan.archive, outDir, 'snapshot', plan.signKey, reporter, plan.o.debug);
    return undefined;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // A recipient that cannot be used was said before the run (archivePlanOf): not again in full.
    reporter.error(
      plan.archive?.problem === undefined
        ? err.message
        : `the snapshot was published to ${outDir}, without its archive (its recipients, said above)`,
    );
    return err.message;
  }
}
