import { join } from 'node:path';
import { hostname } from 'node:os';
import { EXIT } from '../exit-codes.js';
import { FailedError, UsageError } from '../errors.js';
import { readOptions } from '../config/options.js';
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';
import { FINDINGS_FILE, findingsSettings, type FindingsReport } from '../findings/index.js';
import { findingsSince } from './findings.js';
import { diffWithSnapshot, findPreviousSnapshot, type ChangeSet } from '../diff/index.js';
import { checkPrevious } from '../diff/previous.js';
import { buildDigest } from '../notify/digest.js';
import { FindingsFileSchema, type FindingsIn } from '../notify/findings-in.js';
import { deliver, failureWarning, notifySettings, testDigest, type SinkResult } from '../notify/index.js';
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
    const waived =
      o.waivers !== undefined ? await findingsSince(snapshot, previous, findingsSettings(o), deps) : undefined;
    const digest = buildDigest(await noticeOf(snapshot, previous, waived, (m) => deps.reporter.warn(m)));
    results = await deliver(digest, { ...settings, on: ['always'] }, { now });
  }
  for (const r of results) if (r.state === 'failed') deps.reporter.warn(failureWarning(r));
  deps.reporter.close();
  deps.stdout(
    o.json
      ? `${JSON.stringify({ command: 'notify', test: o.test, targets: results } satisfies NotifySummary, null, 2)}\n`
      : results
          // As docs/notify.md shows them: `sent to  <sink>`, `FAILED    <sink>: <why>`.
          .map((r) => `${r.state === 'sent' ? 'sent to  ' : 'FAILED    '}${r.sink}${r.why ? `: ${r.why}` : ''}\n`)
          .join(''),
  );
  return { exitCode: results.every((r) => r.state !== 'failed') ? EXIT.ok : EXIT.failed };
}

/**
 * The notice of a published snapshot: its manifest, its `_findings.json` when it has one, the diff with the previous.
 * Every export file of the snapshot is checked first, as every reader checks it (a changed one: exit 1, nothing sent);
 * a previous snapshot found beside that cannot be compared is warned about and left out, one given is an error.
 */
async function noticeOf(
  snapshot: Snapshot,
  previousGiven: string | undefined,
  waived: FindingsReport | undefined,
  warn: (message: string) => void,
) {
  const dir = snapshot.dir;
  const m = snapshot.manifest;
  const reportName = m.files?.find((f) => /^svc-snapshot-\d{4}-\d{2}-\d{2}\.html$/.test(f.name))?.name;
  const previousDir = previousGiven ?? (await findPreviousSnapshot(dir, m)) ?? null;
  let changes: ChangeSet | undefined;
  if (previousDir !== null) {
    try {
      // The snapshot's files are read (and checked) once, by the comparison; checkRest checks those it did not read.
      changes = await diffWithSnapshot(previousDir, snapshot, () => {});
    } catch (err) {
      if (previousGiven !== undefined) throw err;
      // A damaged snapshot is this command's failure, not the previous night's.
      await snapshot.checkRest();
      warn(
        `the previous snapshot ${previousDir} could not be compared with, so the digest has no changes: ` +
          `${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  await snapshot.checkRest();
  const findings = waived ?? (await findingsFile(snapshot));
  return snapshotNotice(m, {
    outDir: dir,
    exitCode: m.complete ? EXIT.ok : EXIT.incomplete,
    ...(reportName ? { reportFile: join(dir, reportName) } : {}),
    previous: { dir: previousDir, ...(changes ? { changes } : {}) },
    ...(findings ? { findings } : {}),
  });
}

/** The snapshot's `_findings.json`, checked against the manifest's sha256, when it holds one. */
async function findingsFile(snapshot: Snapshot): Promise<FindingsIn | undefined> {
  const listed = snapshot.manifest.files?.find((f) => f.name === FINDINGS_FILE);
  if (!listed) return undefined;
  const bytes = await snapshot.listedFile(listed);
  let parsed: ReturnType<typeof FindingsFileSchema.safeParse>;
  try {
    parsed = FindingsFileSchema.safeParse(JSON.parse(bytes.toString('utf8')));
  } catch {
    parsed = { success: false } as typeof parsed;
  }
  if (!parsed.success) throw new FailedError(`${snapshot.dir}: ${FINDINGS_FILE} is not a findings report of this tool`);
  return parsed.data;
}
