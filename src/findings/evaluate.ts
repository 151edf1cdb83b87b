/**
 * Evaluating the rules over a snapshot's export records: which rules can be
 * evaluated (every export they read available, no column they read listed
 * in the manifest's nullFields), the records each check sees (those of its
 * declared exports, holding the columns the evaluated rules read of them),
 * and the report, sorted so that its bytes depend on the snapshot alone
 * (docs/findings.md).
 */
import { nightCounts } from './counts.js';
import { FailedError } from '../errors.js';
import { CATALOG } from '../exports/catalog.js';
import type { ExportRecord } from '../exports/types.js';
import { RULES, exportsRead } from './catalog.js';
import {
  compareRules,
  compareText,
  severityRank,
  type FindingAbout,
  type RowRef,
  type RuleContext,
  type RuleDef,
  type RuleInput,
  type Severity,
} from './define.js';
import { DISPLAY_READS, DisplayNames, type FindingDisplay } from './display.js';
import { findingId } from './identity.js';

/** The default of `--expiring-days`. */
export const DEFAULT_EXPIRING_DAYS = 30;

interface RuleResult {
  readonly id: string;
  readonly severity: Severity;
  readonly evaluated: boolean;
  /** Why the rule was not evaluated; for an evaluated one, what it left out (an optional export it could not read). */
  readonly reason?: string;
  /** Findings of the rule; null when it was not evaluated (never 0 for "could not look"). */
  readonly count: number | null;
}

/** A waiver as a finding carries it (docs/findings.md): in force (`waived`), or ended (`waiverEnded`). */
export interface WaiverMark {
  readonly reason: string;
  readonly owner: string;
  readonly expires: string;
}

/** new: not seen the night before; open: seen then too, first on `firstSeen` (docs/findings.md). */
type FindingState = 'new' | 'open';

export interface Finding {
  /** Stable across nights and machines (identity.ts). */
  readonly id: string;
  readonly rule: string;
  readonly severity: Severity;
  readonly subject: RowRef;
  readonly related: readonly RowRef[];
  readonly detail: string;
  readonly display: FindingDisplay;
  /** The ids behind `display` (not written: the keys are in subject and related). */
  readonly about?: FindingAbout;
  /** The rule's shorter sentence for the text output, if it has one (not written). */
  readonly summary?: string;
  /** With a previous night to compare with (lifecycle.ts). */
  readonly state?: FindingState;
  readonly firstSeen?: string;
  /** With --waivers (waivers.ts): the waiver in force, or the one that ended. */
  readonly waived?: WaiverMark;
  readonly waiverEnded?: WaiverMark;
}

/** A finding of the previous night that is gone tonight. */
export type ResolvedFinding = Pick<Finding, 'id' | 'rule' | 'severity' | 'subject' | 'detail' | 'display'> & {
  readonly firstSeen: string;
};

/** A finding of the night before of a rule not evaluated tonight, with tonight's waiver in force, if any (applyWaivers). */
export type CarriedFinding = ResolvedFinding & { readonly waived?: WaiverMark };

/** A waiver of the file as `_findings.json` lists it: stale (matches nothing), or ending soon. */
export interface WaiverNote {
  readonly line: number;
  readonly rule: string;
  readonly id?: string;
  readonly subject?: readonly string[];
  readonly owner: string;
  /** Why it was given, for the digest and the report beside its owner. */
  readonly reason?: string;
  readonly expires: string;
}

/** With --waivers: the file's sha256 and what became of its waivers. */
export interface WaiversSummary {
  readonly sha256: string;
  readonly entries: number;
  readonly stale: readonly WaiverNote[];
  readonly endingSoon: readonly WaiverNote[];
  readonly ended: readonly WaiverNote[];
}

/** The night the states are told against: the previous snapshot, or the history database's newest earlier run. */
export interface PreviousNight {
  readonly time: string;
  readonly source: 'snapshot' | 'history';
}

/** `_findings.json` and `svc-snapshot findings --json`. */
export interface FindingsReport {
  readonly time: string;
  readonly previous?: PreviousNight;
  readonly waivers?: WaiversSummary;
  readonly rules: readonly RuleResult[];
  readonly findings: readonly Finding[];
  readonly resolved?: readonly ResolvedFinding[];
  /** The previous night's findings of rules not evaluated tonight: neither seen nor resolved (applyLifecycle). */
  readonly carried?: readonly CarriedFinding[];
}

/** What the evaluation reads of a snapshot manifest. */
export interface FindingsManifest {
  readonly time: string;
  readonly exports: ReadonlyArray<{ readonly export: string; readonly available: boolean; readonly reason?: string }>;
  readonly nullFields: ReadonlyArray<{ readonly export: string; readonly field: string; readonly reason: string }>;
}

export interface EvaluateOptions {
  readonly expiringDays?: number;
  /** `--findings-inherit-levels` (default true). */
  readonly inheritLevels?: boolean;
  readonly rules?: readonly RuleDef[];
}

/**
 * Why an export a rule reads cannot be read on this snapshot, or undefined
 * when it can. An export published with a reason beside `available: true` is
 * one the build says lacks something (`incomplete:`, some realms of a
 * per-realm route failed): the rule would see part of the site, so it cannot
 * be read either (an incomplete input is unavailable).
 */
function unusable(input: RuleInput, manifest: FindingsManifest): string | undefined {
  const entry = manifest.exports.find((e) => e.export === input.export);
  if (!entry) {
    const group = CATALOG.find((d) => d.name === input.export)?.include;
    return `the snapshot has no ${input.export} export${group !== undefined ? ` (it is written with --include ${group})` : ''}`;
  }
  if (!entry.available) return `${input.export} is unavailable: ${entry.reason ?? 'no reason given'}`;
  if (entry.reason !== undefined)
    return `${input.export} is incomplete: ${entry.reason.replace(/^incomplete:\s*/, '')}`;
  for (const column of input.columns) {
    const nul = manifest.nullFields.find((n) => n.export === input.export && n.field === column);
    if (nul) return `${input.export}.${column} is null in this snapshot: ${nul.reason}`;
  }
  return undefined;
}

/**
 * Whether the rule leaves this input out: an optional export the snapshot
 * does not hold (taken without its --include group). An optional export the
 * snapshot holds but cannot give whole (its route failed or was skipped, a
 * column is null) stops the rule like any other: it was asked for.
 */
function leftOutInput(input: RuleInput, manifest: FindingsManifest): boolean {
  return input.optional !== undefined && !manifest.exports.some((e) => e.export === input.export);
}

/** Why a rule cannot be evaluated on this snapshot (an export it needs cannot be read whole), or undefined when it can. */
function notEvaluatedReason(rule: RuleDef, manifest: FindingsManifest): string | undefined {
  for (const input of rule.reads) {
    const why = leftOutInput(input, manifest) ? undefined : unusable(input, manifest);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** What an evaluated rule left out: each optional export the snapshot does not hold, with the reason, and what it never sees. */
function leftOut(rule: RuleDef, manifest: FindingsManifest): string | undefined {
  const parts = rule.reads
    .filter((input) => leftOutInput(input, manifest))
    .map((input) => `${input.optional} (${input.export}) not evaluated: ${unusable(input, manifest)!}`);
  if (rule.unseen !== undefined) parts.push(rule.unseen);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** Two lists element by element, a list that is a prefix of the other first. */
function compareLists<T>(a: readonly T[], b: readonly T[], compare: (x: T, y: T) => number): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compare(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareRef(a: RowRef, b: RowRef): number {
  return compareText(a.export, b.export) || compareLists(a.key, b.key, compareText);
}

const refJson = (r: RowRef) => ({ export: r.export, key: r.key });

/**
 * A finding as its line of `_findings.json`: compact JSON, keys in a fixed
 * order; the lifecycle and waiver members only when known (JSON.stringify
 * leaves out a member whose value is undefined).
 */
function findingLine(f: Finding): string {
  return JSON.stringify({
    id: f.id,
    rule: f.rule,
    severity: f.severity,
    state: f.state,
    firstSeen: f.firstSeen,
    subject: refJson(f.subject),
    related: f.related.map(refJson),
    detail: f.detail,
    display: f.display,
    waived: f.waived,
    waiverEnded: f.waiverEnded,
  });
}

/** A finding with its lifecycle or waiver members set: every finding has all its members, in one order (one object shape). */
export function findingWith(
  f: Finding,
  more: Pick<Finding, 'state' | 'firstSeen' | 'waived' | 'waiverEnded'>,
): Finding {
  return {
    id: f.id,
    rule: f.rule,
    severity: f.severity,
    subject: f.subject,
    related: f.related,
    detail: f.detail,
    display: f.display,
    about: f.about,
    summary: f.summary,
    state: more.state ?? f.state,
    firstSeen: more.firstSeen ?? f.firstSeen,
    waived: more.waived ?? f.waived,
    waiverEnded: more.waiverEnded ?? f.waiverEnded,
  };
}

/** A resolved finding as its line of `_findings.json`'s `resolved`. */
const resolvedJson = (f: ResolvedFinding) => ({
  id: f.id,
  rule: f.rule,
  severity: f.severity,
  firstSeen: f.firstSeen,
  subject: refJson(f.subject),
  detail: f.detail,
  display: f.display,
});

/** A carried finding as its line of `_findings.json`'s `carried`: a resolved one's fields, and its waiver tonight. */
const carriedJson = (f: CarriedFinding) => ({ ...resolvedJson(f), ...(f.waived ? { waived: f.waived } : {}) });

/**
 * Severity (critical first), rule, subject (export, then key part by part),
 * then the related rows the same way, then the detail: every field compared
 * as UTF-16 code units, so that two findings are in one order only unless
 * they are the same. Nothing is serialized to be compared.
 */
function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) ||
      compareText(a.rule, b.rule) ||
      compareRef(a.subject, b.subject) ||
      compareLists(a.related, b.related, compareRef) ||
      compareText(a.detail, b.detail),
  );
}

/** The snapshot's time as epoch milliseconds; a manifest whose time is not a date is refused. */
function snapshotTime(time: string): number {
  const ms = Date.parse(time);
  if (!Number.isFinite(ms))
    throw new FailedError(
      `the snapshot manifest's time ${JSON.stringify(time.slice(0, 40))} is not a date; the findings compare with it, ` +
        `so none were evaluated`,
    );
  return ms;
}

/**
 * Evaluates the rules. `load` gives the records of one export, each holding
 * at least `columns` (the union of what the rules read of it); it is called
 * once per export a rule that can be evaluated reads, and once per available export the
 * display names are read from (DISPLAY_READS), never for another.
 */
export async function evaluateFindings(
  manifest: FindingsManifest,
  load: (exportName: string, columns: readonly string[]) => Promise<readonly ExportRecord[]>,
  opts: EvaluateOptions = {},
): Promise<FindingsReport> {
  const rules = opts.rules ?? RULES;
  const now = snapshotTime(manifest.time);
  const expiringDays = opts.expiringDays ?? DEFAULT_EXPIRING_DAYS;
  const reasons = new Map(rules.map((r) => [r.id, notEvaluatedReason(r, manifest)]));
  // The exports the evaluated rules read, less the optional ones this snapshot does not hold, then those the
  // names are read from that it holds available: a name the snapshot cannot give is said by its id, and stops no rule.
  const evaluable = rules.filter((r) => reasons.get(r.id) === undefined);
  const reads = evaluable.flatMap((r) => r.reads.filter((i) => !leftOutInput(i, manifest)));
  const shown = DISPLAY_READS.filter((d) => manifest.exports.some((e) => e.export === d.export && e.available));
  const loaded = new Map<string, readonly ExportRecord[]>();
  for (const [name, columns] of exportsRead([...reads, ...shown])) loaded.set(name, await load(name, [...columns]));
  const names = new DisplayNames((name) => loaded.get(name));

  const results: RuleResult[] = [];
  const findings: Finding[] = [];
  for (const rule of rules) {
    const reason = reasons.get(rule.id);
    if (reason !== undefined) {
      results.push({ id: rule.id, severity: rule.severity, evaluated: false, reason, count: null });
      continue;
    }
    const ctx: RuleContext = {
      now,
      expiringDays,
      inheritLevels: opts.inheritLevels ?? true,
      has: (name) => rule.reads.some((r) => r.export === name) && loaded.has(name),
      // The records as loaded, shared by the rules (no copy per rule): that a check reads only its declared columns is held by test/unit/findings.test.ts.
      records(name) {
        if (!rule.reads.some((r) => r.export === name))
          throw new Error(`finding rule ${rule.id} reads ${name}, which it does not declare`);
        const records = loaded.get(name);
        if (!records)
          throw new Error(`finding rule ${rule.id} reads ${name}, which this snapshot cannot give: ask has() first`);
        return records;
      },
    };
    const before = findings.length;
    for (const draft of rule.check(ctx)) {
      // Through findingWith: every finding has all its members, in one order.
      const finding = {
        id: findingId(rule.id, draft.subject, draft.part),
        rule: rule.id,
        severity: rule.severity,
        subject: draft.subject,
        related: draft.related ?? [],
        detail: draft.detail,
        display: names.of(draft.about),
        about: draft.about,
        summary: draft.summary,
      };
      findings.push(findingWith(finding, {}));
    }
    const count = findings.length - before;
    results.push({ id: rule.id, severity: rule.severity, evaluated: true, reason: leftOut(rule, manifest), count });
  }
  results.sort(compareRules);
  return { time: manifest.time, rules: results, findings: sortFindings(findings) };
}

/** Findings per chunk of serializeFindingsChunks. */
const FINDINGS_PER_CHUNK = 2000;

/**
 * The text of `_findings.json`, a chunk at a time: the object's members on
 * their own lines (`previous`, `waivers`, `resolved` and `carried` only when known),
 * each rule and each finding one compact JSON line (keys in a fixed order),
 * one newline at the end. A line per finding keeps the file a third of its
 * indented size on a large site, and a diff of two nights' files line by
 * line; chunks spare a large site's file being one string in memory.
 */
export function* serializeFindingsChunks(report: FindingsReport): Generator<string> {
  const waived = report.waivers !== undefined ? waivedCounts(report) : undefined;
  const rules = report.rules.map((r) => ({
    id: r.id,
    severity: r.severity,
    evaluated: r.evaluated,
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
    count: r.count,
    ...(waived && r.evaluated ? { waived: waived.get(r.id) ?? 0 } : {}),
  }));
  const { findings } = report;
  let head = `{\n  "time": ${JSON.stringify(report.time)},\n  "counts": ${JSON.stringify(nightCounts(report))},\n`;
  if (report.previous) head += `  "previous": ${JSON.stringify(report.previous)},\n`;
  if (report.waivers) head += `  "waivers": ${waiversText(report.waivers)},\n`;
  yield `${head}  "rules": ${jsonList(rules, '  ')},\n  "findings": ${findings.length === 0 ? '[]' : '[\n    '}`;
  for (let i = 0; i < findings.length; i += FINDINGS_PER_CHUNK) {
    const lines = findings.slice(i, i + FINDINGS_PER_CHUNK).map(findingLine);
    yield `${i > 0 ? ',\n    ' : ''}${lines.join(',\n    ')}`;
  }
  if (findings.length > 0) yield '\n  ]';
  let tail = '';
  if (report.resolved !== undefined) tail += `,\n  "resolved": ${jsonList(report.resolved.map(resolvedJson), '  ')}`;
  if (report.carried !== undefined) tail += `,\n  "carried": ${jsonList(report.carried.map(carriedJson), '  ')}`;
  yield `${tail}\n}\n`;
}

/** A JSON array, one compact value a line, closed at `indent`; `[]` when empty. */
function jsonList(values: readonly unknown[], indent: string): string {
  const lines = values.map((v) => JSON.stringify(v));
  return lines.length === 0 ? '[]' : `[\n${indent}  ${lines.join(`,\n${indent}  `)}\n${indent}]`;
}

/** The waivers member: its lists one compact entry a line. */
function waiversText(w: WaiversSummary): string {
  const list = (notes: readonly WaiverNote[]) => jsonList(notes, '    ');
  return (
    `{\n    "sha256": ${JSON.stringify(w.sha256)},\n    "entries": ${w.entries},\n    "stale": ${list(w.stale)},\n` +
    `    "endingSoon": ${list(w.endingSoon)},\n    "ended": ${list(w.ended)}\n  }`
  );
}

/** Waived findings per rule. */
function waivedCounts(report: FindingsReport): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of report.findings) if (f.waived) out.set(f.rule, (out.get(f.rule) ?? 0) + 1);
  return out;
}

/**
 * Findings by rule and severity, for the metrics file
 * (`svc_snapshot_findings{rule,severity,site}` and
 * `svc_snapshot_findings_waived{rule,severity,site}`): one entry per evaluated
 * rule, its findings not waived and its waived ones (0 included); a rule not
 * evaluated has no entry.
 */
export function findingCounts(
  report: FindingsReport,
): Array<{ rule: string; severity: Severity; count: number; waived?: number }> {
  const waived = waivedCounts(report);
  return report.rules
    .filter((r) => r.evaluated)
    .map((r) => {
      const w = waived.get(r.id) ?? 0;
      return { rule: r.id, severity: r.severity, count: (r.count ?? 0) - w, ...(report.waivers ? { waived: w } : {}) };
    });
}

/** The rules not evaluated, for the metrics file (`svc_snapshot_findings_unevaluated{rule,severity}`): what --fail-on fails closed on. */
export function unevaluatedRules(report: FindingsReport): Array<{ rule: string; severity: Severity }> {
  return report.rules.filter((r) => !r.evaluated).map((r) => ({ rule: r.id, severity: r.severity }));
}

/** `--fail-on <severity>` and `--fail-on-unevaluated` (default true). */
export interface FailOn {
  readonly severity: Severity | undefined;
  readonly unevaluated: boolean;
}

/**
 * What `--fail-on` fails on (exit 6): the findings of its severity or higher,
 * and, failing closed, the rules of that severity or higher not evaluated (a
 * rule that could not look may hide what it would have found), unless
 * --fail-on-unevaluated=false.
 */
export function failing(
  report: FindingsReport,
  failOn: FailOn,
): { findings: number; unevaluated: ReadonlyArray<{ id: string; reason: string }> } {
  if (failOn.severity === undefined) return { findings: 0, unevaluated: [] };
  const floor = severityRank(failOn.severity);
  // A waived finding does not count (docs/findings.md); one whose waiver ended does.
  const findings = report.findings.filter((f) => !f.waived && severityRank(f.severity) >= floor).length;
  const unevaluated = failOn.unevaluated
    ? report.rules
        .filter((r) => !r.evaluated && severityRank(r.severity) >= floor)
        .map((r) => ({ id: r.id, reason: r.reason ?? 'no reason given' }))
    : [];
  return { findings, unevaluated };
}
