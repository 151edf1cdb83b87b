/**
 * The digest as lines of plain text, capped: what every sink renders in its
 * own format. Every value from the site goes through `clean` first (control
 * characters, CR/LF and right-to-left overrides shown as `\uXXXX`, so that
 * no name can split a line, a header or the reading order) and is cut to a
 * length at a word's end, so that no sink receives a 50,000-character name.
 */
import { countsText } from '../findings/counts.js';
import { rerunText } from '../snapshot/beside.js';
import { escapeControl } from '../util/escape.js';
import type { Digest, DigestFinding } from './digest.js';

/** A value from outside, made one safe line of text. */
export function clean(text: string): string {
  return escapeControl(text);
}

/**
 * `text` cut to at most `max` characters: at the last space in its final
 * fifth when there is one (never inside a word), else before `max` on a
 * code point boundary, with `…` added.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max - 1;
  const space = text.lastIndexOf(' ', cut);
  if (space >= Math.floor(max * 0.8)) cut = space;
  else if (/[\uDC00-\uDFFF]/.test(text[cut] ?? '')) cut--;
  return `${text.slice(0, cut).trimEnd()}…`;
}

/** One section of the digest: a heading and its lines, `more` of them left out for the sink's limits. */
interface Section {
  readonly heading: string;
  readonly lines: readonly string[];
  readonly more: number;
}

export interface DigestDoc {
  /** One line: what happened, where (the subject of an e-mail, the header of a chat message). */
  readonly title: string;
  readonly sections: readonly Section[];
}

/** How much of each list a sink shows, and how long one line may be. */
export interface DocLimits {
  readonly findings: number;
  readonly resolved: number;
  readonly others: number;
  readonly line: number;
}

const COMMAND_NOUN = { snapshot: 'Snapshot', collect: 'Raw collection', audit: 'Audit collection' } as const;

function titleOf(d: Digest): string {
  const noun = COMMAND_NOUN[d.command];
  const site = clip(clean(d.site), 120);
  if (d.test) return `Test message from svc-snapshot on ${site}: notifications reach this target`;
  const what =
    d.outcome.state === 'failed'
      ? `FAILED (exit ${d.outcome.exitCode})`
      : d.outcome.state === 'partial'
        ? `partial (exit ${d.outcome.exitCode})`
        : 'complete';
  const news: string[] = [];
  if (d.findings.length > 0) news.push(`${d.findings.length} ${d.lifecycle ? 'new ' : ''}finding(s)`);
  if (d.resolved.length > 0) news.push(`${d.resolved.length} resolved`);
  if (d.hasChanges) news.push('changes');
  return `${noun} of ${site} ${what}${news.length > 0 ? `: ${news.join(', ')}` : ''}`;
}

function findingLine(f: DigestFinding, max: number): string {
  // A DigestFinding's texts are cleaned already (digest.ts).
  const since = f.state === 'open' && f.firstSeen ? ` (since ${f.firstSeen.slice(0, 10)})` : '';
  return clip(`[${f.severity}] ${f.rule}: ${f.name}: ${f.detail}${since}`, max);
}

/** A list's section: its first `max` items (FindingList's `top`, else the first of an array) and how many more. */
function list<T>(
  heading: string,
  items: readonly T[] | { readonly length: number; top(n: number): readonly T[] },
  max: number,
  line: (x: T) => string,
): Section[] {
  if (items.length === 0) return [];
  const shown = ('top' in items ? items.top(max) : items.slice(0, max)).map(line);
  return [{ heading: `${heading} (${items.length})`, lines: shown, more: items.length - shown.length }];
}

function outcomeSection(d: Digest, l: DocLimits): Section {
  const o = d.outcome;
  const lines = [`exit code ${o.exitCode}, ${o.state}`];
  if (o.failure !== undefined) lines.push(clip(clean(o.failure), Math.max(l.line, 600)));
  const routes = o.failedRoutes.slice(0, l.others).map((r) => clip(`${clean(r.route)}: ${clean(r.error)}`, l.line));
  if (o.failedRoutes.length > 0) lines.push(`failed routes (${o.failedRoutes.length}):`, ...routes);
  return { heading: 'Outcome', lines, more: o.failedRoutes.length - routes.length };
}

function whereSection(d: Digest): Section[] {
  const lines = [
    ...(d.outDir !== undefined ? [`output: ${clean(d.outDir)}`] : []),
    ...(d.reportFile !== undefined ? [`report: ${clean(d.reportFile)}`] : []),
    ...(d.previousDir !== undefined ? [`compared with: ${clean(d.previousDir)}`] : []),
  ];
  return lines.length > 0 ? [{ heading: 'Where', lines, more: 0 }] : [];
}

function exportLine(e: Digest['exports'][number]): string {
  if (!e.available) return `${e.export}: unavailable`;
  if (e.added === undefined) return `${e.export}: ${e.count}`;
  const parts = [
    e.added ? `+${e.added} added` : '',
    e.removed ? `-${e.removed} removed` : '',
    e.changed ? `~${e.changed} changed` : '',
  ].filter((p) => p !== '');
  return `${e.export}: ${e.count} (${parts.length > 0 ? parts.join(', ') : 'no change'})`;
}

/** The digest as sections of capped lines, in the order every sink shows them. */
export function digestDoc(d: Digest, l: DocLimits): DigestDoc {
  if (d.test) return { title: titleOf(d), sections: [] };
  const findingsHeading = d.lifecycle ? 'New findings' : 'Findings';
  const waiverLine = (w: Digest['waiversEndingSoon'][number]) => {
    const what = w.id ?? (w.subject !== undefined ? w.subject.join(' / ') : undefined) ?? 'every subject';
    const why = w.reason !== undefined ? `: ${w.reason}` : '';
    return clip(`${clean(w.rule)} ${clean(what)}${clean(why)} (${clean(w.owner)}, ends ${clean(w.expires)})`, l.line);
  };
  const summary: string[] = [];
  if (d.findingsEvaluated) summary.push(`findings: ${countsText(d.counts)}`);
  const sections: Section[] = [
    outcomeSection(d, l),
    ...(d.rerun ? [{ heading: 'Re-run', lines: [rerunText(d.rerun)], more: 0 }] : []),
    ...(d.problems ? [{ heading: 'Configuration problems', lines: d.problems.map(clean), more: 0 }] : []),
    ...whereSection(d),
    ...(d.exports.length > 0 ? [{ heading: 'Exports', lines: d.exports.map(exportLine), more: 0 }] : []),
    ...(summary.length > 0 ? [{ heading: 'Findings in all', lines: summary, more: 0 }] : []),
    ...list(findingsHeading, d.findings, l.findings, (f) => findingLine(f, l.line)),
    ...list('Resolved findings', d.resolved, l.resolved, (f) => findingLine(f, l.line)),
    ...list('Waivers ending soon', d.waiversEndingSoon, l.others, waiverLine),
    ...list('Rules not evaluated', d.notEvaluated, l.others, (r) => clip(`${r.rule}: ${clean(r.reason)}`, l.line)),
  ];
  return { title: titleOf(d), sections };
}

export function moreLine(n: number): string {
  return `and ${n} more`;
}

/** The document as plain text: the e-mail's text part. */
export function plainText(doc: DigestDoc): string {
  const out = [doc.title, ''];
  for (const s of doc.sections) {
    out.push(s.heading, ...s.lines.map((l) => `  ${l}`));
    if (s.more > 0) out.push(`  ${moreLine(s.more)}`);
    out.push('');
  }
  return `${out.join('\n')}\n`;
}
