/**
 * The report page (README.md, "The report"): one HTML file, no script, no
 * request to anything outside it (the Content-Security-Policy forbids them),
 * readable with JavaScript off and printable. Pure: the model in, the bytes
 * out; every list is sorted, and the only time on the page is the snapshot's.
 * Every value from the site goes through escape.ts.
 */
import { rerunText } from '../snapshot/beside.js';
import type { ChangeSet, ExportDiff } from '../diff/types.js';
import { compareText } from '../findings/define.js';
import { esc, sentence, text, value } from './escape.js';
import type { ReportModel, TrendNight, VmStates } from './model.js';
import { STYLE } from './style.js';
import { findingsSection } from './findings.js';
import { cappedTable, notShown, plural, section, table } from './html.js';
import { countChart } from './svg.js';
import { readableColumnValue, readableTime, withoutIds } from '../util/readable.js';

/** Changed records shown per export; the rest are counted. */
export const CHANGES_SHOWN = 50;
/** Changed columns shown per changed record (with a value cut at 200 characters, a page stays small whatever the site). */
const COLUMNS_SHOWN = 30;
/** Null columns, validation samples and drifting routes shown; the rest are counted. */
const LIST_SHOWN = 200;

/** `default-src 'none'`: no script, frame, font, fetch or form target; inline styles and data: images only. */
export const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Ids → names (ReportModel's `names`). */
type Names = ReadonlyMap<string, string> | undefined;

/** An id as a person reads it: its name where the snapshot gives one, else the text without its ids. */
const idName = (v: string, names: Names): string => names?.get(v) ?? withoutIds(v);

/**
 * A value of column `column` as a person reads it: an id by its name (a
 * list of ids by theirs), a time in ISO 8601 UTC, a size in KiB, MiB or GiB,
 * no UUID; the exact values are in the export files.
 */
function shownValue(column: string, v: unknown, names: Names): string {
  const readable = readableColumnValue(column, v);
  if (readable !== undefined) return text(readable);
  if (typeof v === 'string') {
    const shown = idName(v, names);
    return shown === v ? value(v) : text(shown);
  }
  if (Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === 'string')) {
    const shown = v.map((e) => idName(e, names));
    return shown.every((e, i) => e === v[i]) ? value(v) : text(shown.join(', '));
  }
  return value(v);
}

/** Columns that name a record for a reader, in order of preference, when they are not part of the key. */
const LABEL_COLUMNS = ['name', 'email', 'teamName', 'server', 'projectName'];

/**
 * A key as `column=value` pairs, ids by name; for an added or removed record
 * (`rec`), the first column of LABEL_COLUMNS it holds that the key does not.
 */
function keyText(
  key: Readonly<Record<string, unknown>>,
  names: Names,
  rec?: Readonly<Record<string, unknown>>,
): string {
  const pairs = Object.entries(key).map(([k, v]) => [k, v] as const);
  const label = rec && LABEL_COLUMNS.find((c) => !(c in key) && typeof rec[c] === 'string' && rec[c] !== '');
  if (label) pairs.push([label, rec![label]]);
  return pairs.map(([k, v]) => `<span class="k">${text(k)}</span>=<bdi>${shownValue(k, v, names)}</bdi>`).join(' ');
}

function header(m: ReportModel): string {
  const man = m.manifest;
  const sig = m.signature;
  const sigText =
    sig.state === 'unsigned'
      ? 'unsigned (no signature beside the manifest)'
      : `${esc(sig.state)}${sig.key ? ` (key <code>${text(sig.key)}</code>)` : ''}${sig.reason ? `: ${text(sig.reason)}` : ''}`;
  const complete = man.complete
    ? '<strong>complete</strong>: every route was read'
    : '<strong class="bad">partial</strong>: some routes failed (published with --allow-partial)';
  const rows = [
    ['Site', `<bdi>${text(man.baseUrl)}</bdi>`],
    ['Time', `<time datetime="${esc(man.time)}">${esc(readableTime(man.time))}</time>`],
    ['Source', man.source === 'live' ? 'live: collected from the server' : 'replay: built from a raw collection'],
    ['Tool', `${text(man.tool.name)} ${text(man.tool.version)}`],
    ['Completeness', complete],
    ['Signature', sigText],
    ...(m.rerun ? [['Re-run', `<strong class="bad">${esc(rerunText(m.rerun))}</strong>`]] : []),
  ];
  const facts = rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('');
  return `<header><h1>Snapshot of <bdi>${text(man.baseUrl)}</bdi>, ${esc(man.date)}</h1>\n<dl class="facts">${facts}</dl></header>\n`;
}

function change(n: number, sign: string, what: string): string {
  return n === 0
    ? '<td class="num">0</td>'
    : `<td class="num ${what}">${sign}${n}<span class="vh"> ${what}</span></td>`;
}

function exportsSection(m: ReportModel): string {
  const changes = 'changes' in m.previous ? m.previous.changes : undefined;
  const rows = m.manifest.exports.map((e) => {
    const d = changes?.exports.find((x) => x.export === e.export);
    const avail = e.available
      ? 'available'
      : `<span class="bad">unavailable</span>: ${sentence(e.reason ?? 'no reason given')}`;
    const diff = d
      ? `${change(d.counts.added, '+', 'added')}${change(d.counts.removed, '−', 'removed')}${change(d.counts.changed, '~', 'changed')}`
      : '<td class="num">–</td><td class="num">–</td><td class="num">–</td>';
    return `<tr><th scope="row">${text(e.export)}</th><td class="num">${e.count}</td>${diff}<td>${avail}</td></tr>`;
  });
  const name = 'name' in m.previous ? `<bdi>${text(m.previous.name)}</bdi>` : '';
  const since = changes
    ? `<p>Since the previous snapshot, ${name} of ${esc(changes.older.time ? readableTime(changes.older.time) : 'unknown time')}: ` +
      `${changes.totals.added} added, ${changes.totals.removed} removed, ${changes.totals.changed} changed, ` +
      `in ${plural(changes.totals.exportsChanged, 'export')}.</p>\n`
    : `<p>No comparison: ${sentence('problem' in m.previous ? m.previous.problem : '')}</p>\n`;
  return section(
    'exports',
    'Exports',
    since + table(['Export', 'Records', 'Added', 'Removed', 'Changed', 'Availability'], rows, 'exports'),
  );
}

/** One export's changes: added and removed by key, changed with each column old → new; at most CHANGES_SHOWN records. */
function exportChanges(d: ExportDiff, names: Names): string {
  const rows: string[] = [];
  const keyOf = (r: Readonly<Record<string, unknown>>) => Object.fromEntries(d.key.map((k) => [k, r[k]]));
  for (const r of d.added)
    rows.push(`<tr class="added"><td class="nw">added</td><td>${keyText(keyOf(r), names, r)}</td><td></td></tr>`);
  for (const r of d.removed)
    rows.push(`<tr class="removed"><td class="nw">removed</td><td>${keyText(keyOf(r), names, r)}</td><td></td></tr>`);
  for (const r of d.changed) {
    const more =
      r.changes.length > COLUMNS_SHOWN
        ? `<li class="more">${r.changes.length - COLUMNS_SHOWN} more changed columns not shown</li>`
        : '';
    const cols = r.changes
      .slice(0, COLUMNS_SHOWN)
      .map(
        (c) =>
          `<li><span class="k">${text(c.column)}</span>: <bdi class="old">${shownValue(c.column, c.old, names)}</bdi> → ` +
          `<bdi class="new">${shownValue(c.column, c.new, names)}</bdi></li>`,
      )
      .join('');
    rows.push(
      `<tr class="changed"><td class="nw">changed</td><td>${keyText(r.key, names)}</td><td class="wide"><ul class="cols">${cols}${more}</ul></td></tr>`,
    );
  }
  const total = d.counts.added + d.counts.removed + d.counts.changed;
  const kept = rows.slice(0, CHANGES_SHOWN);
  const counts = `${d.counts.added} added, ${d.counts.removed} removed, ${d.counts.changed} changed`;
  const avail = d.availability === 'both' ? '' : ` (availability: ${esc(d.availability)})`;
  const shown =
    (kept.length > 0 ? table(['Change', 'Key', 'Columns, old → new'], kept, 'changes') : '') +
    notShown(total - kept.length, 'changed records');
  return `<details class="export" open><summary><h3>${text(d.export)}</h3> ${counts}${avail}</summary>\n${shown}</details>\n`;
}

function changesSection(m: ReportModel): string {
  if (!('changes' in m.previous)) return '';
  const c: ChangeSet = m.previous.changes;
  const changed = c.exports.filter((d) => d.hasChanges);
  if (changed.length === 0) return section('changes', 'Changes', '<p>Nothing changed.</p>\n');
  // A filter without script: radio buttons and CSS (style.ts) hide the rows of the other kinds.
  const kinds = ['all', 'added', 'removed', 'changed'];
  const radios = kinds.map(
    (k) =>
      `<input type="radio" name="kind" id="show-${k}"${k === 'all' ? ' checked' : ''}><label for="show-${k}">${k}</label>`,
  );
  const filter = `<fieldset class="filter"><legend>Show</legend>${radios.join(' ')}</fieldset>\n`;
  const ignored =
    c.ignore.length > 0
      ? `<p class="note">Columns not compared (volatile): ${c.ignore.map((i) => `<code>${text(i)}</code>`).join(', ')}.</p>\n`
      : '';
  return section(
    'changes',
    'Changes',
    `${ignored}${filter}<div class="change-list">\n${changed.map((d) => exportChanges(d, m.names)).join('')}</div>\n`,
  );
}

/** A proposed route's cell: the route, if the manifest proposes one. */
const routeCell = (route: string | undefined) => `<td>${route ? `<code>${text(route)}</code>` : ''}</td>`;

function availabilitySection(m: ReportModel): string {
  const man = m.manifest;
  const unavailable = man.exports.filter((e) => !e.available);
  const unavailableRow = (e: (typeof unavailable)[number]) =>
    `<tr><th scope="row">${text(e.export)}</th><td>${sentence(e.reason ?? 'no reason given')}</td>` +
    `${routeCell(e.proposedRoute)}</tr>`;
  let body =
    unavailable.length === 0
      ? '<p>Every export is available.</p>\n'
      : table(['Export', 'Reason', 'Proposed route'], unavailable.map(unavailableRow));
  const nulls = [...man.nullFields].sort((a, b) => compareText(a.export, b.export) || compareText(a.field, b.field));
  const nullRow = (n: (typeof nulls)[number]) =>
    `<tr><td>${text(n.export)}</td><td><code>${text(n.field)}</code></td>` +
    `<td>${sentence(n.reason)}</td>${routeCell(n.proposedRoute)}</tr>`;
  body += `<h3>Null columns</h3>\n`;
  body +=
    nulls.length === 0
      ? '<p>No column is null for want of a route.</p>\n'
      : `<details><summary>${plural(nulls.length, 'column')} always null, with the reason</summary>\n` +
        cappedTable(['Export', 'Column', 'Reason', 'Proposed route'], nulls, LIST_SHOWN, nullRow, 'null columns') +
        '</details>\n';
  return section('availability', 'Availability and null columns', body);
}

function validationSection(m: ReportModel): string {
  const v = m.manifest.validation;
  const title = 'Validation issues';
  if (v.issues === 0)
    return section('validation', title, '<p>No field of the wrong type, no record at odds with its route.</p>\n');
  const rows = v.samples
    .slice(0, LIST_SHOWN)
    .map(
      (s) =>
        `<tr><td><code>${text(s.route)}</code></td>` +
        `<td class="num">${s.index}</td><td><code>${text(s.path)}</code></td><td>${sentence(s.message)}</td></tr>`,
    );
  const intro =
    `<p>${plural(v.issues, 'issue')}: a field of the wrong type is exported as null, an undocumented value is kept, ` +
    `a record naming another realm than its route is exported under the route's; the samples the manifest keeps:</p>\n`;
  return section('validation', title, intro + table(['Route', 'Record', 'Field', 'Problem'], rows));
}

function driftSection(m: ReportModel): string {
  const drift = [...m.manifest.drift].sort((a, b) => compareText(a.route, b.route));
  if (drift.length === 0) return section('drift', 'Drift', '<p>No route returned fields the models do not know.</p>\n');
  const fields = (d: (typeof drift)[number]) =>
    [...d.unknownFields].sort(compareText).map((f) => `<code>${text(f)}</code>`);
  const row = (d: (typeof drift)[number]) =>
    `<tr><td><code>${text(d.route)}</code></td><td>${fields(d).join(', ')}</td></tr>`;
  const intro = '<p>Routes that returned fields the models do not know:</p>\n';
  return section('drift', 'Drift', intro + cappedTable(['Route', 'Unknown fields'], drift, LIST_SHOWN, row, 'routes'));
}

function trendsSection(m: ReportModel): string {
  const h = m.history;
  if (!h) return '';
  if ('problem' in h)
    return section(
      'trends',
      'Trends',
      `<p>The history database ${text(h.label)} could not be read: ${sentence(h.problem)}</p>\n`,
    );
  const nights: readonly TrendNight[] = h.nights;
  const names = m.manifest.exports.map((e) => e.export);
  for (const n of nights)
    for (const k of Object.keys(n.counts).sort(compareText)) if (!names.includes(k)) names.push(k);
  const charts = names.map((name, i) => {
    const points = nights.map((n) => ({ date: n.date, count: n.counts[name] }));
    const rows = points.map((p) => `<tr><td>${esc(p.date)}</td><td class="num">${p.count ?? '–'}</td></tr>`);
    return (
      `<figure class="trend">${countChart(`trend-${i}`, name, points)}<figcaption>${text(name)}</figcaption>` +
      `<details class="numbers"><summary>the numbers</summary>${table(['Night', 'Records'], rows)}</details></figure>`
    );
  });
  const intro = `<p>Records per export over ${plural(nights.length, 'night')} (${text(h.label)}).</p>\n`;
  return section('trends', 'Trends', `${intro}<div class="trends">\n${charts.join('\n')}\n</div>\n`);
}

function vmsSection(vms: readonly VmStates[] | undefined): string {
  if (!vms || vms.length === 0) return '';
  const parts = vms.map((v) => {
    const rows = v.counts.map(([s, n]) => `<tr><td><bdi>${text(s)}</bdi></td><td class="num">${n}</td></tr>`);
    return `<h3>${text(v.export)}: by <code>${text(v.column)}</code></h3>\n${table(['State', 'VMs'], rows)}`;
  });
  return section('vms', 'VMs\u2019 states', parts.join(''));
}

function nav(m: ReportModel): string {
  const links: Array<[string, string]> = [
    ['findings', 'Findings'],
    ['exports', 'Exports'],
  ];
  if ('changes' in m.previous) links.push(['changes', 'Changes']);
  links.push(['availability', 'Availability'], ['validation', 'Validation'], ['drift', 'Drift']);
  if (m.history) links.push(['trends', 'Trends']);
  if (m.vms && m.vms.length > 0) links.push(['vms', 'VMs']);
  return `<nav aria-label="Sections"><ul>${links.map(([id, t]) => `<li><a href="#${id}">${t}</a></li>`).join('')}</ul></nav>\n`;
}

/** The page, as UTF-8 text. */
export function renderReport(m: ReportModel): string {
  const title = `svc-snapshot report: ${text(m.manifest.baseUrl)}, ${m.manifest.date}`;
  return [
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">\n`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="referrer" content="no-referrer">\n',
    `<title>${title}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n`,
    header(m),
    nav(m),
    '<main>\n',
    findingsSection(m.findings),
    exportsSection(m),
    changesSection(m),
    availabilitySection(m),
    validationSection(m),
    driftSection(m),
    trendsSection(m),
    vmsSection(m.vms),
    '</main>\n',
    `<footer><p>Written by ${text(m.manifest.tool.name)} ${text(m.manifest.tool.version)} ` +
      `from the snapshot of ${esc(readableTime(m.manifest.time))}.</p></footer>\n`,
    '</body>\n</html>\n',
  ].join('');
}
