import { dirname, join } from 'node:path';
import { reportFileName } from '../manifests.js';
import { hostname } from 'node:os';
import { EXIT } from '../exit-codes.js';
import { FailedError, UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';
import { FINDINGS_FILE, findingsSettings, type FindingsSettings } from '../findings/index.js';
import { diffWithSnapshot, type ChangeSet } from '../diff/index.js';
import { checkPrevious, previousSnapshotBeside, type PreviousBeside } from '../snapshot/beside.js';
import { modelOfDirectory } from '../report/index.js';
import { buildDigest } from '../notify/digest.js';
import { readFindingsFile, type FindingsIn } from '../findings/file.js';
import { deliver, notifySettings, testDigest } from '../notify/index.js';
import { tellFailures, type SinkResult } from '../notify/outcomes.js';
import { snapshotNotice } from '../notify/notice.js';
import type { NotifySummary } from '../summaries/schemas.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

const USAGE =
  'svc-snapshot notify <snapshot-dir> [--previous <dir>] --notify <target>, or notify --test --notify <target>';

/** `svc-snapshot notify` (docs/notify.md): exit 0 when every target took the message, 1 when one did not. */
export async function runNotify(rawFlags: RawFlags, args: string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('notify', rawFlags, deps.env);
  const [given] = args;
  if (!o.test && (given === undefined || given === ''))
    throw new UsageError(`notify needs a snapshot directory: ${USAGE}`);
  if (o.test && given !== undefined) throw new UsageError(`notify --test takes no snapshot directory: ${USAGE}`);
  if (o.previous === '') throw new UsageError('--previous is empty (an unset variable?); give a snapshot directory');
  const settings = notifySettings('notify', rawFlags, deps.env);
  if (!settings) throw new UsageError(`notify needs at least one target (--notify or SVC_NOTIFY_FILE): ${USAGE}`);
  const now = deps.now();
  let results: SinkResult[];
  if (o.test) {
    results = await deliver(testDigest(hostname(), now), settings, { now, test: true });
  } else {
    const dir = resolveOutDir(deps.cwd, given!, given!);
    const previous = o.previous !== undefined ? resolveOutDir(deps.cwd, o.previous, o.previous) : undefined;
    deps.reporter.info(`reading ${dir}`);
    // --waivers: the findings evaluated again, as `findings` does, with the waivers of today's file.
    const snapshot = await openSnapshot(dir);
    if (previous !== undefined) await checkPrevious(snapshot, previous, (m) => deps.reporter.warn(m));
    const warn = (m: string) => deps.reporter.warn(m);
    // --waivers or --previous: the night told again against that night with today's waivers, as `report` tells it.
    const notice =
      o.waivers !== undefined || previous !== undefined
        ? await toldAgain(snapshot, previous, findingsSettings(o), warn)
        : await noticeOf(snapshot, warn);
    const digest = buildDigest(notice, settings.reportUrl);
    results = await deliver(digest, { ...settings, on: ['always'] }, { now });
  }
  // The lines on stdout say it already; with --json each failure is an error line on stderr too, for a person.
  if (o.json) tellFailures(results, deps.reporter, true);
  deps.reporter.close();
  deps.stdout(
    o.json
      ? `${JSON.stringify({ command: 'notify', test: o.test, targets: results } satisfies NotifySummary, null, 2)}\n`
      : results.map(resultLine).join(''),
  );
  return { exitCode: results.every((r) => r.state !== 'failed') ? EXIT.ok : EXIT.failed };
}

/** As docs/notify.md shows them: `slack #2: ok`, `email #3: failed: <reason>`. */
function resultLine(r: SinkResult): string {
  return r.state === 'failed' ? `${r.target}: failed: ${r.why ?? 'unknown reason'}\n` : `${r.target}: ok\n`;
}

/**
 * The notice of a published snapshot: its manifest, its `_findings.json` when it has one, the diff with the previous.
 * Every export file of the snapshot is checked first, as every reader checks it (a changed one: exit 1, nothing sent);
 * a previous snapshot found beside that cannot be compared is warned about and left out, one given is an error.
 */
async function noticeOf(snapshot: Snapshot, warn: (message: string) => void) {
  const dir = snapshot.dir;
  const m = snapshot.manifest;
  const beside = await previousSnapshotBeside(dir, m);
  const previousDir = beside.dir ?? null;
  let changes: ChangeSet | undefined;
  if (previousDir !== null) {
    try {
      // The snapshot's files are read (and checked) once, by the comparison; checkRest checks those it did not read.
      changes = await diffWithSnapshot(previousDir, snapshot, () => {});
    } catch (err) {
      // A damaged snapshot is this command's failure, not the previous night's.
      await snapshot.checkRest();
      warn(
        `the previous snapshot ${previousDir} could not be compared with, so the digest has no changes: ` +
          `${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  await snapshot.checkRest();
  const findings = await findingsFile(snapshot);
  return publishedNotice(snapshot, beside, { dir: previousDir, ...(changes ? { changes } : {}) }, findings);
}

/**
 * The notice of a snapshot told again (`--previous`, `--waivers`): its findings evaluated against the night given,
 * else the one beside it, with today's waivers, and the changes since that night, each export file read once.
 */
async function toldAgain(
  snapshot: Snapshot,
  previous: string | undefined,
  settings: FindingsSettings,
  warn: (message: string) => void,
) {
  const m = snapshot.manifest;
  const beside = await previousSnapshotBeside(snapshot.dir, m);
  const model = await modelOfDirectory(snapshot, {
    inheritLevels: settings.inheritLevels,
    expiringDays: settings.expiringDays,
    ...(settings.waivers ? { waivers: settings.waivers } : {}),
    warn,
    ...(previous !== undefined ? { previous } : {}),
  });
  if ('problem' in model.findings) warn(`the findings could not be evaluated: ${model.findings.problem}`);
  const compared = model.previous;
  const previousDir = previous ?? ('changes' in compared ? join(dirname(snapshot.dir), compared.name) : null);
  const changes = 'changes' in compared ? compared.changes : undefined;
  const findings = 'report' in model.findings ? model.findings.report : undefined;
  return publishedNotice(snapshot, beside, { dir: previousDir, ...(changes ? { changes } : {}) }, findings);
}

/** The notice of a published snapshot, with the comparison and findings the command made. */
function publishedNotice(
  snapshot: Snapshot,
  beside: PreviousBeside,
  previous: { readonly dir: string | null; readonly changes?: ChangeSet },
  findings: FindingsIn | undefined,
) {
  const m = snapshot.manifest;
  const reportName = m.files?.find((f) => f.name === reportFileName(m.date))?.name;
  return snapshotNotice(m, {
    outDir: snapshot.dir,
    exitCode: m.complete ? EXIT.ok : EXIT.incomplete,
    ...(reportName ? { reportFile: join(snapshot.dir, reportName) } : {}),
    previous,
    ...(findings ? { findings } : {}),
    ...(beside.newer ? { rerun: { of: m.date, newer: beside.newer.date } } : {}),
  });
}

/** The snapshot's `_findings.json`, checked against the manifest's sha256, when it holds one. */
async function findingsFile(snapshot: Snapshot): Promise<FindingsIn | undefined> {
  const listed = snapshot.manifest.files?.find((f) => f.name === FINDINGS_FILE);
  const file = listed && readFindingsFile((await snapshot.listedFile(listed)).toString('utf8'));
  if (listed && !file) throw new FailedError(`${snapshot.dir}: ${FINDINGS_FILE} is not a findings report of this tool`);
  return file;
}
