/**
 * The report's findings (README.md, "The report"; docs/findings.md): the counts by
 * severity, what is new and resolved since the previous night first, what
 * the waivers did, then every finding under the person (then the project) it
 * is about, by the names a person reads. Every value from the site goes
 * through escape.ts.
 */
import { countsText, nightCounts } from '../findings/counts.js';
import { SEVERITIES } from '../findings/define.js';
import type { Finding, FindingsReport, ResolvedFinding, WaiverNote } from '../findings/evaluate.js';
import { findingHeading, groupFindings, waiverLists } from '../findings/format.js';
import { esc, sentence, text, value } from './escape.js';
import { cappedTable, notShown, plural, section, table } from './html.js';
import type { ReportModel } from './model.js';

/** Findings shown on the page (new, resolved, and under their people); the rest are counted. */
const FINDINGS_SHOWN = 200;

const subjectCell = (f: { subject: Finding['subject'] }) =>
  `${text(f.subject.export)} <bdi>${f.subject.key.map((k) => value(k)).join(', ')}</bdi>`;

/** What a finding says beside its person: the requirement it is about and its whole sentence (the page has room for it). */
function what(f: Finding): string {
  const d = f.display;
  const req =
    d.requirement !== undefined
      ? `requirement <bdi>${text(d.requirement)}</bdi>${d.level !== undefined ? ` of level <bdi>${text(d.level)}</bdi>` : ''}: `
      : '';
  return `${req}${sentence(f.detail)}`;
}

function stateCell(f: Finding): string {
  if (f.state === 'new') return '<strong>new</strong>';
  if (f.state === 'open') return `open since ${esc((f.firstSeen ?? '').slice(0, 10))}`;
  return '';
}

function waiverCell(f: Finding): string {
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
function sinceList<F extends Finding | ResolvedFinding>(
  title: string,
  list: readonly F[],
  heads: readonly string[],
  cells: (f: F) => string,
): string {
  if (list.length === 0) return '';
  const row = (f: F) => `<tr>${ruleCells(f)}<td><bdi>${text(findingHeading(f))}</bdi></td>${cells(f)}</tr>`;
  return (
    `<details open><summary>${title}: ${plural(list.length, 'finding')}</summary>\n` +
    cappedTable(['Severity', 'Rule', 'Who', ...heads], list, FINDINGS_SHOWN, row, `${title.toLowerCase()} findings`) +
    '</details>\n'
  );
}

function since(r: FindingsReport): string {
  const against = r.previous
    ? `Since the ${r.previous.source === 'history' ? 'history database' : 'snapshot'} of ${esc(r.previous.time)}`
    : 'No night before';
  const counts = `<p class="counts">${against}: ${countsText(nightCounts(r))}.</p>\n`;
  if (!r.previous) return counts;
  const fresh = r.findings.filter((f) => f.state === 'new');
  const resolved = r.resolved ?? [];
  return (
    counts +
    sinceList('New', fresh, ['What', 'Waiver'], (f) => `<td>${what(f)}</td><td>${waiverCell(f)}</td>`) +
    sinceList(
      'Resolved',
      resolved,
      ['Detail', 'First seen'],
      (f) => `<td>${sentence(f.detail)}</td><td class="nw">${esc(f.firstSeen.slice(0, 10))}</td>`,
    )
  );
}

function noteItem(n: WaiverNote): string {
  const match =
    n.id !== undefined ? `id ${text(n.id)}` : `subject <bdi>${(n.subject ?? []).map((k) => value(k)).join(', ')}</bdi>`;
  return `<li>line ${n.line}: <code>${text(n.rule)}</code> ${match} (<bdi>${text(n.owner)}</bdi>, expires ${text(n.expires)})</li>`;
}

function waivers(r: FindingsReport): string {
  const w = r.waivers;
  if (!w) return '';
  const waived = r.findings.filter((f) => f.waived).length;
  let body = `<h3>Waivers</h3>\n<p>${plural(w.entries, 'waiver')} (file sha256 <code>${esc(w.sha256)}</code>): ${plural(waived, 'finding')} waived.</p>\n`;
  for (const [title, list] of waiverLists(w))
    if (list.length > 0) body += `<p>${title}:</p>\n<ul>${list.map(noteItem).join('')}</ul>\n`;
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
            `<td><bdi>${text(project)}</bdi></td><td>${what(f)}</td><td>${subjectCell(f)}</td><td>${waiverCell(f)}</td></tr>`,
        );
      }
    }
    if (rows.length === 0) continue;
    body +=
      `<details open><summary><bdi>${text(group.heading)}</bdi>: ${plural(n, 'finding')}</summary>\n` +
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
