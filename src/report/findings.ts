/**
 * The report's findings (README.md, "The report"; docs/findings.md): the counts by
 * severity, what is new and resolved since the previous night first, what
 * the waivers did, then every finding under the person (then the project) it
 * is about, by the names a person reads. Every value from the site goes
 * through escape.ts.
 */
import { countsText, nightCounts } from '../findings/counts.js';
import { SEVERITIES } from '../findings/define.js';
import type { CarriedFinding, Finding, FindingsReport, ResolvedFinding, WaiverNote } from '../findings/evaluate.js';
import {
  groupFindings,
  notEvaluatedReasons,
  readableHeading,
  readableSentence,
  waiverLists,
  waiverSubject,
} from '../findings/format.js';
import { readableTime, withoutIds } from '../util/readable.js';
import { esc, sentence, text } from './escape.js';
import { cappedTable, notShown, plural, section, table } from './html.js';
import type { ReportModel } from './model.js';

/** Findings shown on the page (new, resolved, and under their people); the rest are counted. */
const FINDINGS_SHOWN = 200;

/** The export of the row a finding is about: its key values are ids (exact in the JSON and CSV); the names are in the row. */
const subjectCell = (f: { subject: Finding['subject'] }) => text(f.subject.export);

/** What a finding says beside its person: the requirement it is about and its whole sentence (the page has room for it). */
function what(f: Finding): string {
  const d = f.display;
  const req =
    d.requirement !== undefined
      ? `requirement <bdi>${text(d.requirement)}</bdi>${d.level !== undefined ? ` of level <bdi>${text(d.level)}</bdi>` : ''}: `
      : '';
  return `${req}${sentence(readableSentence(f.detail))}`;
}

function stateCell(f: Finding): string {
  if (f.state === 'new') return '<strong>new</strong>';
  if (f.state === 'open') return `open since ${esc((f.firstSeen ?? '').slice(0, 10))}`;
  return '';
}

function waiverCell(f: Pick<Finding, 'waived' | 'waiverEnded'>): string {
  if (f.waived)
    return `waived by <bdi>${text(f.waived.owner)}</bdi> until ${text(f.waived.expires)}: ${sentence(f.waived.reason)}`;
  if (f.waiverEnded)
    return `<strong class="bad">waiver of <bdi>${text(f.waiverEnded.owner)}</bdi> ended ${text(f.waiverEnded.expires)}</strong>`;
  return '';
}

/** A finding's severity and rule, the first two cells of its row. */
const ruleCells = (f: { severity: string; rule: string }) =>
  `<td class="nw sev-${f.severity}">${f.severity}</td><td class="nw"><code>${text(f.rule)}</code></td>`;

/** The new or resolved findings, up to FINDINGS_SHOWN: severity, rule and who, then the columns `cells` gives. */
function sinceList<F extends Finding | ResolvedFinding | CarriedFinding>(
  title: string,
  list: readonly F[],
  heads: readonly string[],
  cells: (f: F) => string,
): string {
  if (list.length === 0) return '';
  const row = (f: F) => `<tr>${ruleCells(f)}<td><bdi>${text(readableHeading(f))}</bdi></td>${cells(f)}</tr>`;
  return (
    `<details open><summary>${title}: ${plural(list.length, 'finding')}</summary>\n` +
    cappedTable(['Severity', 'Rule', 'Who', ...heads], list, FINDINGS_SHOWN, row, `${title.toLowerCase()} findings`) +
    '</details>\n'
  );
}

function since(r: FindingsReport): string {
  const against = r.previous
    ? `Since the ${r.previous.source === 'history' ? 'history database' : 'snapshot'} of ${esc(readableTime(r.previous.time))}`
    : 'No night before';
  const counts = `<p class="counts">${against}: ${countsText(nightCounts(r))}.</p>\n`;
  if (!r.previous) return counts + carried(r);
  const fresh = r.findings.filter((f) => f.state === 'new');
  const resolved = r.resolved ?? [];
  return (
    counts +
    sinceList('New', fresh, ['What', 'Waiver'], (f) => `<td>${what(f)}</td><td>${waiverCell(f)}</td>`) +
    sinceList(
      'Resolved',
      resolved,
      ['Detail', 'Resolved', 'First seen'],
      (f) =>
        `<td>${sentence(readableSentence(f.detail))}</td><td class="nw">${esc(r.time.slice(0, 10))}</td>` +
        `<td class="nw">${esc(f.firstSeen.slice(0, 10))}</td>`,
    ) +
    carried(r)
  );
}

/** The night before's findings of rules not evaluated tonight: neither seen nor resolved, each with why its rule was not. */
function carried(r: FindingsReport): string {
  const reasons = notEvaluatedReasons(r);
  return sinceList(
    'Carried',
    r.carried ?? [],
    ['What', 'Not evaluated tonight', 'First seen', 'Waiver'],
    (f) =>
      `<td>${sentence(readableSentence(f.detail))}</td><td>${sentence(reasons.get(f.rule) ?? 'no reason given')}</td>` +
      `<td class="nw">${esc(f.firstSeen.slice(0, 10))}</td><td>${f.waived ? waiverCell(f) : ''}</td>`,
  );
}

/** A waiver: what it matches by name, its owner, reason and end date. */
function noteItem(n: WaiverNote, r: FindingsReport): string {
  const why = n.reason !== undefined ? `: ${sentence(n.reason)}` : '';
  return (
    `<li>line ${n.line}: <code>${text(n.rule)}</code>, <bdi>${text(waiverSubject(n, r))}</bdi>${why} ` +
    `(<bdi>${text(n.owner)}</bdi>, until ${text(n.expires)})</li>`
  );
}

function waivers(r: FindingsReport): string {
  const w = r.waivers;
  if (!w) return '';
  const waived = r.findings.filter((f) => f.waived).length;
  let body = `<h3>Waivers</h3>\n<p>${plural(w.entries, 'waiver')} (file sha256 <code>${esc(w.sha256)}</code>): ${plural(waived, 'finding')} waived.</p>\n`;
  for (const [title, list] of waiverLists(w))
    if (list.length > 0) body += `<p>${title}:</p>\n<ul>${list.map((n) => noteItem(n, r)).join('')}</ul>\n`;
  return body;
}

/** Every finding under its person, then project, up to FINDINGS_SHOWN in all. */
function byPerson(findings: readonly Finding[]): string {
  let shownCount = 0;
  let body = '';
  for (const group of groupFindings(findings)) {
    const rows: string[] = [];
    let n = 0;
    for (const { project, findings: list } of group.projects) {
      for (const f of list) {
        n++;
        if (shownCount >= FINDINGS_SHOWN) continue;
        shownCount++;
        rows.push(
          `<tr>${ruleCells(f)}<td class="nw">${stateCell(f)}</td>` +
            `<td><bdi>${text(withoutIds(project))}</bdi></td><td>${what(f)}</td><td>${subjectCell(f)}</td><td>${waiverCell(f)}</td></tr>`,
        );
      }
    }
    if (rows.length === 0) continue;
    body +=
      `<details open><summary><bdi>${text(withoutIds(group.heading))}</bdi>: ${plural(n, 'finding')}</summary>\n` +
      table(['Severity', 'Rule', 'State', 'Project', 'What', 'Subject', 'Waiver'], rows) +
      '</details>\n';
  }
  return body + notShown(findings.length - shownCount, 'findings');
}

/** The rules `which` picks, with their reasons, under a title; nothing for no rule. */
function ruleList(title: string, r: FindingsReport, which: (rule: FindingsReport['rules'][number]) => boolean): string {
  const rules = r.rules.filter(which);
  if (rules.length === 0) return '';
  const items = rules.map((x) => `<li><code>${text(x.id)}</code>: ${sentence(x.reason ?? 'no reason given')}</li>`);
  return `<h3>${title}</h3>\n<ul>${items.join('')}</ul>\n`;
}

export function findingsSection(f: ReportModel['findings']): string {
  if ('problem' in f)
    return section('findings', 'Findings', `<p>The findings could not be evaluated: ${sentence(f.problem)}</p>\n`);
  const r: FindingsReport = f.report;
  const counts = SEVERITIES.map((s) => [s, r.findings.filter((x) => x.severity === s).length] as const);
  let body = `<p class="counts">${counts.map(([s, n]) => `<span class="sev${n > 0 ? ` sev-${s}` : ''}">${s}: ${n}</span>`).join(' ')}</p>\n`;
  body += since(r) + waivers(r);
  if (r.findings.length === 0) body += '<p>No finding.</p>\n';
  else body += `<h3>By person</h3>\n${byPerson(r.findings)}`;
  body += ruleList('Rules not evaluated', r, (x) => !x.evaluated);
  // Evaluated without an optional export (the running VMs without --include vms): what was left out.
  body += ruleList('Rules evaluated in part', r, (x) => x.evaluated && x.reason !== undefined);
  return section('findings', 'Findings', body);
}
