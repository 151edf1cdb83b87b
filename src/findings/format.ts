/**
 * The text of `svc-snapshot findings` (docs/findings.md): the rules, what
 * changed since the previous night, then every finding under the person (then
 * the project) it is about. Every value that came from the data is escaped
 * for the terminal.
 */
import { countsText, nightCounts } from './counts.js';
import { escapeControl } from '../util/escape.js';
import { readableTime, withoutIds } from '../util/readable.js';
import type { RowRef } from './define.js';
import type { FindingDisplay } from './display.js';
import type {
  CarriedFinding,
  Finding,
  FindingsReport,
  ResolvedFinding,
  WaiverNote,
  WaiversSummary,
} from './evaluate.js';

/**
 * The export of the row a finding is about: its key values are ids and row
 * ids (exact in the JSON and CSV); the names beside it say whom it is about.
 */
function refText(r: RowRef): string {
  return escapeControl(r.export);
}

/** A time as its date, for "open since" and "first seen". */
const day = (time: string | undefined): string => escapeControl((time ?? '').slice(0, 10));

/** A sentence of the data as a person reads it: names, no UUID or raw key (exact in the JSON and CSV). */
export const readableSentence = (text: string): string => withoutIds(text);

/** The person a display names: full name and e-mail (raw: the caller escapes it for where it goes). */
function person(d: FindingDisplay): string | undefined {
  if (d.user === undefined) return undefined;
  return d.email !== undefined && d.email !== d.user ? `${d.user} <${d.email}>` : d.user;
}

/** Who or what a finding is about, as its group's heading (raw text). */
function findingHeading(f: { display: FindingDisplay; subject: RowRef }): string {
  const d = f.display;
  return (
    person(d) ??
    (d.project !== undefined
      ? `project ${d.project}`
      : d.team !== undefined
        ? `team ${d.team}`
        : d.level !== undefined
          ? `security level ${d.level}`
          : `${f.subject.export} ${f.subject.key.join(' / ')}`)
  );
}

/** The heading as a person reads it: a name the snapshot could not give keeps what it says, not its id. */
export const readableHeading = (f: { display: FindingDisplay; subject: RowRef }): string =>
  withoutIds(findingHeading(f));

const heading = (f: { display: FindingDisplay; subject: RowRef }) => escapeControl(readableHeading(f));

/** One person's (or thing's) findings, by project ('' first: those about no project). */
export interface FindingGroup {
  readonly heading: string;
  readonly projects: ReadonlyArray<{ readonly project: string; readonly findings: readonly Finding[] }>;
}

/** The findings under their person (or project, team, level, row), then project: groups in the order of their first finding. */
export function groupFindings(findings: readonly Finding[]): FindingGroup[] {
  const groups = new Map<string, Map<string, Finding[]>>();
  for (const f of findings) {
    const head = findingHeading(f);
    let projects = groups.get(head);
    // What is about the person alone (no project) comes first.
    if (!projects) groups.set(head, (projects = new Map([['', []]])));
    const sub = f.display.user !== undefined && f.display.project !== undefined ? f.display.project : '';
    let list = projects.get(sub);
    if (!list) projects.set(sub, (list = []));
    list.push(f);
  }
  return [...groups].map(([head, projects]) => ({
    heading: head,
    projects: [...projects]
      .filter(([, list]) => list.length > 0)
      .map(([project, list]) => ({ project, findings: list })),
  }));
}

/** What the finding says under its heading: the requirement it is about, or its sentence. */
function what(f: Finding): string {
  const d = f.display;
  if (d.requirement !== undefined) {
    const level = d.level !== undefined ? ` of level "${escapeControl(d.level)}"` : '';
    return `requirement "${escapeControl(d.requirement)}"${level}: ${escapeControl(readableSentence(f.summary ?? f.detail))}`;
  }
  return escapeControl(readableSentence(f.summary ?? f.detail));
}

function tags(f: Finding): string {
  const out: string[] = [];
  if (f.state === 'new') out.push('[new]');
  if (f.state === 'open') out.push(`[open since ${day(f.firstSeen)}]`);
  const w = f.waived;
  if (w)
    out.push(`[waived by ${escapeControl(w.owner)} until ${escapeControl(w.expires)}: ${escapeControl(w.reason)}]`);
  const e = f.waiverEnded;
  if (e) out.push(`[waiver of ${escapeControl(e.owner)} ended ${escapeControl(e.expires)}]`);
  return out.length > 0 ? `${out.join(' ')} ` : '';
}

const sev = (s: string) => s.toUpperCase().padEnd(8);

function findingLine(f: Finding, indent: string): string {
  return `${indent}${sev(f.severity)}  ${f.rule}  ${tags(f)}${what(f)}  (${refText(f.subject)})`;
}

function grouped(findings: readonly Finding[]): string[] {
  const lines: string[] = [];
  for (const group of groupFindings(findings)) {
    lines.push('', escapeControl(withoutIds(group.heading)));
    for (const { project, findings: list } of group.projects) {
      if (project !== '') lines.push(`  project ${escapeControl(withoutIds(project))}`);
      for (const f of list) lines.push(findingLine(f, project !== '' ? '    ' : '  '));
    }
  }
  return lines;
}

/** A resolved finding: resolved on the night of `time` (the snapshot's), first seen on its first night. */
function resolvedLine(f: ResolvedFinding, time: string): string {
  return (
    `  ${sev(f.severity)}  ${f.rule}  ${heading(f)}: ${escapeControl(readableSentence(f.detail))}  ` +
    `(resolved ${day(time)}, first seen ${day(f.firstSeen)}; ${refText(f.subject)})`
  );
}

/** A finding carried from the night before: its rule was not evaluated tonight, for `reason`. */
function carriedLine(f: CarriedFinding, reason: string): string {
  const w = f.waived;
  const waived = w
    ? `[waived by ${escapeControl(w.owner)} until ${escapeControl(w.expires)}: ${escapeControl(w.reason)}] `
    : '';
  return (
    `  ${sev(f.severity)}  ${f.rule}  [carried: not evaluated tonight, ${escapeControl(reason)}] ${waived}` +
    `${heading(f)}: ${escapeControl(readableSentence(f.detail))}  (first seen ${day(f.firstSeen)}; ${refText(f.subject)})`
  );
}

/** Why each rule not evaluated tonight was not: by the rule's id. */
export function notEvaluatedReasons(report: FindingsReport): Map<string, string> {
  return new Map(report.rules.filter((r) => !r.evaluated).map((r) => [r.id, r.reason ?? 'no reason given']));
}

/** The findings a waiver matches (tonight's, carried, else resolved ones): by its id, or its subject as a key prefix. */
function matchedBy(n: WaiverNote, report: FindingsReport): ReadonlyArray<{ display: FindingDisplay }> {
  const matches = (f: Pick<Finding, 'id' | 'rule' | 'subject'>) =>
    f.rule === n.rule &&
    (n.id !== undefined
      ? f.id === n.id
      : n.subject !== undefined &&
        n.subject.length <= f.subject.key.length &&
        n.subject.every((k, i) => f.subject.key[i] === k));
  const tonight = [...report.findings, ...(report.carried ?? [])].filter(matches);
  return tonight.length > 0 ? tonight : (report.resolved ?? []).filter(matches);
}

const DISPLAY_ORDER = ['user', 'project', 'team', 'requirement', 'level', 'vms'] as const;

/**
 * What a waiver matches, as a person reads it (raw text): the names the
 * findings it matches all share (`Priya Tanaka <…>, project Project 1`),
 * when a finding it matches is known; else its id or key values.
 */
export function waiverSubject(n: WaiverNote, report: FindingsReport): string {
  const found = matchedBy(n, report);
  if (found.length > 0) {
    const first = found[0]!.display;
    const names = DISPLAY_ORDER.flatMap((k) => {
      const v = first[k];
      if (v === undefined || found.some((f) => f.display[k] !== v)) return [];
      if (k === 'user') return [person(first)!];
      return [k === 'vms' ? v : `${k} ${v}`];
    });
    if (names.length > 0) return withoutIds(names.join(', '));
  }
  return n.id !== undefined ? `id ${n.id}` : `subject ${(n.subject ?? []).join(' / ')}`;
}

function noteText(n: WaiverNote, report: FindingsReport): string {
  const why = n.reason !== undefined ? `: ${escapeControl(n.reason)}` : '';
  return (
    `line ${n.line}: ${escapeControl(n.rule)}, ${escapeControl(waiverSubject(n, report))}${why} ` +
    `(${escapeControl(n.owner)}, until ${escapeControl(n.expires)})`
  );
}

/** The waivers' lists a reader acts on, titled, in the order the text and the report show them. */
export function waiverLists(w: WaiversSummary): ReadonlyArray<readonly [string, readonly WaiverNote[]]> {
  return [
    ['Ended (their findings are active again)', w.ended],
    ['Ending soon', w.endingSoon],
    ['Stale (they match no finding)', w.stale],
  ];
}

/** The lines before the findings: the comparison with the previous night, and the waivers. */
function overTime(report: FindingsReport): string[] {
  const since = report.previous
    ? `Since ${report.previous.source === 'history' ? 'the history database' : 'the snapshot'} of ${escapeControl(readableTime(report.previous.time))}`
    : 'No night before';
  const lines: string[] = ['', `${since}: ${countsText(nightCounts(report))}.`];
  const fresh = report.findings.filter((f) => f.state === 'new');
  if (report.previous) {
    const resolved = report.resolved ?? [];
    if (fresh.length > 0)
      lines.push('New:', ...fresh.map((f) => findingLine(f, '  ').replace('[new] ', `${heading(f)}: `)));
    if (resolved.length > 0) lines.push('Resolved:', ...resolved.map((f) => resolvedLine(f, report.time)));
  }
  const carried = report.carried ?? [];
  if (carried.length > 0) {
    const reasons = notEvaluatedReasons(report);
    lines.push(
      'Carried from the night before (their rule was not evaluated tonight):',
      ...carried.map((f) => carriedLine(f, reasons.get(f.rule) ?? 'no reason given')),
    );
  }
  const w = report.waivers;
  if (w) {
    const waived = report.findings.filter((f) => f.waived).length;
    lines.push('', `Waivers (sha256 ${w.sha256}): ${w.entries} entries, ${waived} finding(s) waived.`);
    for (const [title, list] of waiverLists(w))
      if (list.length > 0) lines.push(`${title}:`, ...list.map((n) => `  ${noteText(n, report)}`));
  }
  return lines;
}

export function formatFindings(report: FindingsReport, dir: string): string {
  const lines = [`Findings in ${escapeControl(dir)} at ${escapeControl(readableTime(report.time))}`];
  const idWidth = Math.max(...report.rules.map((r) => r.id.length));
  for (const r of report.rules) {
    const head = `  ${r.id.padEnd(idWidth)}  ${r.severity.padEnd(8)}`;
    const partly = r.reason !== undefined ? `  (${escapeControl(r.reason)})` : '';
    if (!r.evaluated) lines.push(`${head}  not evaluated: ${escapeControl(r.reason ?? '')}`);
    else lines.push(`${head}  ${String(r.count).padStart(6)}${partly}`);
  }
  lines.push(...overTime(report));
  if (report.findings.length === 0) {
    const evaluated = report.rules.filter((r) => r.evaluated).length;
    lines.push(
      '',
      evaluated === 0
        ? 'No rule could be evaluated on this snapshot: no findings can be told (not that there are none).'
        : evaluated < report.rules.length
          ? 'No findings from the rules evaluated.'
          : 'No findings.',
    );
  } else lines.push(...grouped(report.findings));
  return `${lines.join('\n')}\n`;
}
