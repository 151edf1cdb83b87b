/**
 * The vocabulary of the findings (docs/findings.md). A rule is data; the
 * evaluation, the "not evaluated" reasons and docs/findings.md are computed
 * from these declarations, and a check reads only the columns its rule
 * declares (held by test/unit/findings.test.ts).
 */
import type { ExportRecord } from '../exports/types.js';

// The severities are declared with the option that names them (--fail-on), below the rules.
import { SEVERITIES, type Severity } from '../config/values.js';
export { SEVERITIES, type Severity };

/** Higher is more severe: critical 4 … info 0. */
export function severityRank(s: Severity): number {
  return SEVERITIES.length - 1 - SEVERITIES.indexOf(s);
}

/** Strings by UTF-16 code units (not by locale), so that an order depends on the data alone. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rules (or their results) as docs/findings.md and `_findings.json` list them: by severity, highest first, then id. */
export function compareRules(a: { severity: Severity; id: string }, b: { severity: Severity; id: string }): number {
  return severityRank(b.severity) - severityRank(a.severity) || compareText(a.id, b.id);
}

/** A row of an export, named by the values of the export's key columns (docs/exports.md), in key order. */
export interface RowRef {
  readonly export: string;
  readonly key: readonly string[];
}

/**
 * The ids of what a finding is about, by kind, for the names a person reads
 * (its `display`: display.ts looks them up): a user, project, team, security
 * requirement or level, and the running VMs (realm and id).
 */
export interface FindingAbout {
  readonly user?: string;
  readonly project?: string;
  readonly team?: string;
  readonly requirement?: string;
  readonly level?: string;
  readonly vms?: ReadonlyArray<readonly [string, string]>;
}

/** What a check reports: the row that must be acted on, the rows that show why (absent: none), and one sentence. */
export interface FindingDraft {
  readonly subject: RowRef;
  readonly related?: readonly RowRef[];
  readonly detail: string;
  /**
   * Where one subject can have several findings of the rule, what tells them
   * apart (the requirement of a certification rule): part of the finding's
   * stable id (docs/findings.md). Absent where a subject has one finding.
   */
  readonly part?: string;
  readonly about?: FindingAbout;
  /** A shorter sentence than `detail` for a line under the person and project it is about (the text output); else the detail. */
  readonly summary?: string;
}

/** The columns of one export a rule reads. */
export interface RuleInput {
  readonly export: string;
  readonly columns: readonly string[];
  /**
   * What the rule leaves out when the snapshot does not hold this export (an
   * export of an `--include` group the snapshot was not taken with): the rule
   * is evaluated without it and says so in its reason. A snapshot that holds
   * it but cannot give it whole (a failed route, a null column) has the rule
   * not evaluated, as for any other input.
   */
  readonly optional?: string;
}

/** A passage of the spec a rule rests on: where, and the words. */
export interface SpecCitation {
  readonly where: string;
  readonly text: string;
}

export interface RuleContext {
  /** The snapshot's time (its manifest's `time`), epoch milliseconds: what "passed" and "within" compare with. */
  readonly now: number;
  /** `--expiring-days` (default 30). */
  readonly expiringDays: number;
  /** `--findings-inherit-levels` (default true): a project is held to its ancestors' security levels too. */
  readonly inheritLevels: boolean;
  /** The records of a declared export, holding at least the declared columns (those other rules read of it too): read no other. */
  records(exportName: string): readonly ExportRecord[];
  /** Whether a declared optional export can be read (records() of one that cannot throws). */
  has(exportName: string): boolean;
}

export interface RuleDef {
  readonly id: string;
  readonly severity: Severity;
  /** One line. */
  readonly description: string;
  /** The exact meaning, markdown, for docs/findings.md: what is compared, what is skipped, what the spec leaves unknown. */
  readonly meaning: string;
  readonly spec: readonly SpecCitation[];
  readonly reads: readonly RuleInput[];
  /**
   * What the rule's meaning names but no snapshot's exports hold, so the rule
   * never sees it: said in the rule's `reason` every time it is evaluated, so
   * that its count is never read as covering it.
   */
  readonly unseen?: string;
  /** Where one subject can have several findings of the rule: what tells them apart (a draft's `part`), for docs/findings.md. */
  readonly part?: string;
  readonly check: (ctx: RuleContext) => Iterable<FindingDraft>;
}

/** Declares a rule. The catalog checks every declaration against the export catalog at load. */
export function defineRule(input: RuleDef): RuleDef {
  return Object.freeze({
    ...input,
    spec: Object.freeze(input.spec.map((s) => Object.freeze({ ...s }))),
    reads: Object.freeze(input.reads.map((r) => Object.freeze({ ...r, columns: Object.freeze([...r.columns]) }))),
  });
}

/** A cell as the key text of a row reference: strings as they are, other scalars as JSON, null as ''. */
export function keyText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

/** A timestamp column (epoch milliseconds) as a number, or undefined when absent or not a finite number. */
export function ts(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** What a usage row still holds, for a detail: "N VM(s), N drive(s) and N vault file(s) (N bytes)"; undefined for nothing. */
export function resourcesHeld(vms: unknown, drives: unknown, files: unknown, bytes: unknown): string | undefined {
  const [v, d, f] = [vms, drives, files].map((n) => ts(n) ?? 0) as [number, number, number];
  if (v <= 0 && d <= 0 && f <= 0) return undefined;
  return `${v} VM(s), ${d} drive(s) and ${f} vault file(s) (${ts(bytes) ?? 0} bytes)`;
}

/** Epoch milliseconds as an ISO date-time, for details. */
export function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
