/**
 * The text of `svc-snapshot findings` (docs/findings.md): the rules, what
 * changed since the previous night, then every finding under the person (then
 * the project) it is about. Every value that came from the data is escaped
 * for the terminal.
 */
import { countsText, nightCounts } from './counts.js';
import { escapeControl } from '../util/escape.js';
import type { RowRef } from './define.js';
import type { FindingDisplay } from './display.js';
import type { Finding, FindingsReport, ResolvedFinding, WaiverNote, WaiversSummary } from './evaluate.js';

function refText(r: RowRef): string {
  return `${r.export} ${r.key.map((k) => escapeControl(k)).join(' / ')}`;
}

/** A time as its date, for "open since" and "first seen". */
const day = (time: string | undefined): string => escapeControl((time ?? '').slice(0, 10));

/** The person a display names: full name and e-mail (raw: the caller escapes it for where it goes). */
function person(d: FindingDisplay): string | undefined {
  if (d.user === undefined) return undefined;
  return d.email !== undefined && d.email !== d.user ? `${d.user} <${d.email}>` : d.user;
}

/** Who or what a finding is about, as its group's heading (raw text). */
export function findingHeading(f: { display: FindingDisplay; subject: RowRef }): string {
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

const heading = (f: { display: FindingDisplay; subject: RowRef }) => escapeControl(findingHeading(f));

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
    return `requirement "${escapeControl(d.requirement)}"${level}: ${escapeControl(f.summary ?? f.detail)}`;
  }
  return escapeControl(f.summary ?? f.detail);
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
    lines.push('', escapeControl(group.heading));
    for (const { project, findings: list } of group.projects) {
      if (project !== '') lines.push(`  project ${escapeControl(project)}`);
      for (const f of list) lines.push(findingLine(f, project !== '' ? '    ' : '  '));
    }
  }
  return lines;
}

function resolvedLine(f: ResolvedFinding): string {
  return (
    `  ${sev(f.severity)}  ${f.rule}  ${heading(f)}: ${escapeControl(f.detail)}  (first seen ${day(f.firstSeen)}; ` +
    `${refText(f.subject)})`
  );
}

function noteText(n: WaiverNote): string {
  const match =
    n.id !== undefined ? `id ${escapeControl(n.id)}` : `subject ${(n.subject ?? []).map(escapeControl).join(' / ')}`;
  return `line ${n.line}: ${escapeControl(n.rule)} ${match} (${escapeControl(n.owner)}, expires ${escapeControl(n.expires)})`;
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
    ? `Since ${report.previous.source === 'history' ? 'the history database' : 'the snapshot'} of ${escapeControl(report.previous.time)}`
    : 'No night before';
  const lines: string[] = ['', `${since}: ${countsText(nightCounts(report))}.`];
  const fresh = report.findings.filter((f) => f.state === 'new');
  if (report.previous) {
    const resolved = report.resolved ?? [];
    if (fresh.length > 0)
      lines.push('New:', ...fresh.map((f) => findingLine(f, '  ').replace('[new] ', `${heading(f)}: `)));
    if (resolved.length > 0) lines.push('Resolved:', ...resolved.map(resolvedLine));
  }
  const w = report.waivers;
  if (w) {
    const waived = report.findings.filter((f) => f.waived).length;
    lines.push('', `Waivers (sha256 ${w.sha256}): ${w.entries} entries, ${waived} finding(s) waived.`);
    for (const [title, list] of waiverLists(w))
      if (list.length > 0) lines.push(`${title}:`, ...list.map((n) => `  ${noteText(n)}`));
  }
  return lines;
}

export function formatFindings(report: FindingsReport, dir: string): string {
  const lines = [`Findings in ${escapeControl(dir)} at ${escapeControl(report.time)}`];
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
