/**
 * The findings' lifecycle (docs/findings.md): against the previous
 * night's findings, each finding is `new` or `open` since `firstSeen` (the
 * time of the first snapshot it was seen in, carried from night to night),
 * and the previous night's findings that are gone are `resolved`. Findings
 * are matched by their stable id alone (identity.ts).
 *
 * The previous night's findings come from its `_findings.json` when the
 * snapshot holds one written by this version (checked against its manifest,
 * and against the one schema of the file), else from the rules evaluated
 * over its exports (then `firstSeen` starts at that snapshot's time).
 */
import { FINDINGS_FILE_NAME } from './names.js';
import { readFindingsFile, type FindingIn } from './file.js';
import { openSnapshot, type Snapshot } from '../snapshot/dir.js';
import { findPreviousSnapshot, type OwnSnapshot } from '../snapshot/beside.js';
import {
  findingWith,
  type EvaluateOptions,
  type FindingsReport,
  type PreviousNight,
  type CarriedFinding,
  type ResolvedFinding,
  type WaiverMark,
} from './evaluate.js';

/** A finding of the previous night, as the lifecycle needs it: a resolved finding's fields, `firstSeen` where known (and its waiver, for the history). */
export type PreviousFinding = Omit<ResolvedFinding, 'firstSeen'> & {
  readonly firstSeen?: string;
  readonly waived?: WaiverMark;
};

export interface PreviousFindings {
  readonly night: PreviousNight;
  readonly findings: readonly PreviousFinding[];
}

/**
 * The report with each finding's state and first night, and the previous
 * night's findings that are gone. Those of a rule not evaluated tonight are
 * not gone, only unseen (never told as fewer findings):
 * they are `carried`, so that the next night that evaluates the rule keeps
 * their `firstSeen`, and their alerts go on. Their waiver of the night before
 * is not kept: tonight's waivers file decides it (applyWaivers), as it does
 * for tonight's findings.
 */
export function applyLifecycle(report: FindingsReport, previous: PreviousFindings): FindingsReport {
  const before = new Map<string, PreviousFinding>();
  for (const f of previous.findings) if (!before.has(f.id)) before.set(f.id, f);
  const findings = report.findings.map((f) => {
    const was = before.get(f.id);
    return was
      ? findingWith(f, { state: 'open', firstSeen: was.firstSeen ?? previous.night.time })
      : findingWith(f, { state: 'new', firstSeen: report.time });
  });
  const now = new Set(report.findings.map((f) => f.id));
  const unevaluated = new Set(report.rules.filter((r) => !r.evaluated).map((r) => r.id));
  const resolved: ResolvedFinding[] = [];
  const carried: CarriedFinding[] = [];
  for (const f of before.values()) {
    if (now.has(f.id)) continue;
    const gone = {
      id: f.id,
      rule: f.rule,
      severity: f.severity,
      subject: f.subject,
      detail: f.detail,
      display: f.display,
      firstSeen: f.firstSeen ?? previous.night.time,
    };
    if (!unevaluated.has(f.rule)) resolved.push(gone);
    else carried.push(gone);
  }
  return { ...report, previous: previous.night, findings, resolved, ...(carried.length > 0 ? { carried } : {}) };
}

/**
 * The findings of `_findings.json`'s text, carried ones included (a rule not
 * evaluated that night carried its findings of the night before: they are
 * still the previous night's), or undefined when it is not the file this
 * version writes (an earlier one's has no ids).
 */
export function parseFindingsFile(text: string): { time: string; findings: PreviousFinding[] } | undefined {
  const file = readFindingsFile(text);
  if (!file) return undefined;
  const findings = [...file.findings, ...(file.carried ?? [])];
  const named = (f: FindingIn) =>
    f.id !== undefined && f.display !== undefined && Object.values(f.display).every((v) => typeof v === 'string');
  return findings.every(named) ? { time: file.time, findings: findings as PreviousFinding[] } : undefined;
}

/** The findings of a snapshot's `_findings.json` (checked against the manifest's size and sha256), when it holds one this version wrote. */
export async function findingsFileOf(snapshot: Snapshot): Promise<PreviousFindings | undefined> {
  const listed = snapshot.manifest.files?.find((f) => f.name === FINDINGS_FILE_NAME);
  const file = listed && parseFindingsFile((await snapshot.listedFile(listed)).toString('utf8'));
  return file && { night: { time: file.time, source: 'snapshot' }, findings: file.findings };
}

/** The previous snapshot's findings: its `_findings.json`, else the rules evaluated over its exports with the same settings (`evaluate`). */
export async function previousFindingsOf(
  snapshot: Snapshot,
  evaluate: (snapshot: Snapshot, opts: EvaluateOptions) => Promise<FindingsReport>,
  opts: EvaluateOptions,
): Promise<PreviousFindings> {
  const file = await findingsFileOf(snapshot);
  if (file) return file;
  const report = await evaluate(snapshot, opts);
  return { night: { time: report.time, source: 'snapshot' }, findings: report.findings };
}

/** Where the previous night is looked for: a directory given (--previous), or beside the snapshot (as --diff-previous finds it). */
export interface PreviousLookup {
  readonly given?: string;
  /** The snapshot's directory (its final name for a snapshot in staging), its time and its site (`baseUrl`). */
  readonly beside?: OwnSnapshot & { readonly dir: string };
  /** A previous snapshot found beside that cannot be read is warned about and left out: it must not fail a night. */
  readonly warn: (message: string) => void;
}

/**
 * The previous night's findings: those of the snapshot given, whose problems
 * are the command's (exit 1 or 2), or of the newest older snapshot beside
 * this one, if any, left out with a warning when it cannot be read.
 */
export async function previousFindings(
  lookup: PreviousLookup,
  evaluate: (snapshot: Snapshot, opts: EvaluateOptions) => Promise<FindingsReport>,
  opts: EvaluateOptions,
): Promise<PreviousFindings | undefined> {
  if (lookup.given !== undefined) return previousFindingsOf(await openSnapshot(lookup.given), evaluate, opts);
  if (!lookup.beside) return undefined;
  const dir = await findPreviousSnapshot(lookup.beside.dir, lookup.beside);
  if (dir === undefined) return undefined;
  return previousOrWarn(async () => previousFindingsOf(await openSnapshot(dir), evaluate, opts), dir, lookup.warn);
}

/** The findings of a previous snapshot found beside, or undefined with a warning when they cannot be read: they must not fail a night. */
export async function previousOrWarn(
  read: () => Promise<PreviousFindings>,
  dir: string,
  warn: (message: string) => void,
): Promise<PreviousFindings | undefined> {
  try {
    return await read();
  } catch (e) {
    warn(
      `the findings of the previous snapshot ${dir} could not be read, so every finding is told without a state: ` +
        `${e instanceof Error ? e.message : String(e)}`,
    );
    return undefined;
  }
}
