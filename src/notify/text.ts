/**
 * The digest as lines of text, capped: what every text sink (Slack, Teams,
 * e-mail) renders in its own format. In a person's order: one verdict line,
 * the lines that come right after it (a re-run, configuration problems),
 * the night's counts, the new findings grouped by who acts on them, the
 * resolved ones, the waivers to look at again, the exports that changed,
 * and where to read more. Every value from the site goes through `clean`
 * (control characters, CR/LF and right-to-left overrides shown as
 * `\uXXXX`) and `withoutIds` (no UUID or raw key list), and is cut at a
 * word's end.
 */
import { normaliseSite } from '../config/url.js';
import { escapeControl } from '../util/escape.js';
import { withoutIds } from '../util/readable.js';
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
  /** The verdict: `<site> <YYYY-MM-DD>: OK`, `PARTIAL (<n> routes failed)` or `FAILED (<reason>)`. */
  readonly title: string;
  /** Right after the verdict, never cut: a re-run, the configuration's problems, the counts. */
  readonly lead: readonly string[];
  readonly sections: readonly Section[];
  /** Where to read more, last, never cut. */
  readonly link: readonly string[];
}

/** How much of each list a sink shows, and how long one line may be. */
export interface DocLimits {
  readonly findings: number;
  readonly resolved: number;
  readonly others: number;
  readonly line: number;
}

function siteOf(d: Digest): string {
  return clip(clean(normaliseSite(d.site)), 120);
}

function verdict(d: Digest): string {
  const o = d.outcome;
  const head = `${siteOf(d)} ${d.time.slice(0, 10)}`;
  if (d.test) return `Test message from svc-snapshot on ${siteOf(d)}: notifications reach this target`;
  if (o.state === 'failed') {
    const why = o.failure !== undefined ? clip(withoutIds(clean(o.failure)), 200) : `exit code ${o.exitCode}`;
    return `${head}: FAILED (${why})`;
  }
  if (o.state === 'partial') return `${head}: PARTIAL (${o.failedRoutes.length} routes failed)`;
  return `${head}: OK`;
}

/** The rule's title as a person reads it: `certification-expired` is "Certification expired". */
function ruleTitle(rule: string): string {
  const words = rule.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The part of a certification rule's detail that the names in parentheses
 * already say (the project, its level and the requirement): what is left
 * is what is wrong (`holds no certification for it`).
 */
const SAID_BY_NAMES = new RegExp(
  '^member of project "[^"]*", ' +
    '(?:which inherits from its (?:parent|ancestor) project "[^"]*" the security level "[^"]*", requiring' +
    '|whose security level "[^"]*" requires) "[^"]*", ',
);

/** The rule's title and the names other than the person's: `Certification missing (Project 1, NDA, Level 1)`. */
function findingTitle(f: DigestFinding): string {
  return `${ruleTitle(f.rule)}${f.context !== '' ? ` (${withoutIds(f.context)})` : ''}`;
}

/** What is wrong, in a few words: the title, and the detail without ids or what the names say. */
function findingText(f: DigestFinding): string {
  const what = withoutIds(f.detail)
    // The person is the group's heading: the detail's own "user …," is said there.
    .replace(/^user …[,:]? */, '')
    .replace(SAID_BY_NAMES, '');
  return `${findingTitle(f)}: ${what}`;
}

/** Who acts, as the group's heading: a name, never an id (`… (no project of that id listed)` says just that). */
function personText(person: string): string {
  const p = withoutIds(person).replace(/^…\s*\((.*)\)$/, '$1');
  return p === '' ? 'Other' : p;
}

/** The new findings, grouped by who acts (in the order their most severe finding comes), each a line. */
function grouped(list: readonly DigestFinding[], max: number): string[] {
  const groups = new Map<string, DigestFinding[]>();
  for (const f of list) {
    const who = personText(f.person);
    const g = groups.get(who);
    if (g) g.push(f);
    else groups.set(who, [f]);
  }
  const lines: string[] = [];
  for (const [who, fs] of groups) {
    lines.push(`${clip(who, 120)}:`);
    for (const f of fs) lines.push(clip(`  - [${f.severity}] ${findingText(f)}`, max));
  }
  return lines;
}

function section(heading: string, total: number, lines: string[], shown: number): Section[] {
  if (total === 0) return [];
  return [{ heading: `${heading} (${total})`, lines, more: total - shown }];
}

function waiverLine(w: Digest['waivers'][number], max: number): string {
  const v = w.waiver;
  const who = w.who !== undefined ? `, ${withoutIds(w.who)}` : '';
  const why = v.reason !== undefined ? `: ${clean(v.reason)}` : '';
  const until = w.kind === 'ended' ? `ended ${clean(v.expires)}` : `until ${clean(v.expires)}`;
  return clip(`${w.kind}: ${ruleTitle(clean(v.rule))}${who}${why} (${clean(v.owner)}, ${until})`, max);
}

/** `users +3 −1 ~2`: an export that changed, and how (a minus sign, as people write it). */
function exportLine(e: Digest['exports'][number]): string | undefined {
  if (!e.available) return `${e.export} unavailable`;
  if (!e.added && !e.removed && !e.changed) return undefined;
  const parts = [e.added ? `+${e.added}` : '', e.removed ? `\u2212${e.removed}` : '', e.changed ? `~${e.changed}` : ''];
  return `${e.export} ${parts.filter((p) => p !== '').join(' ')}`;
}

function countsLine(d: Digest): string[] {
  const c = d.counts;
  if (c === undefined) return [];
  return [`${c.new} new, ${c.open} open, ${c.resolved} resolved, ${c.waived} waived, ${c.active} active`];
}

function linkLines(d: Digest): string[] {
  if (d.link === undefined) return [];
  return [d.link.report !== undefined ? `Report: ${clean(d.link.report)}` : `Snapshot: ${clean(d.link.snapshot)}`];
}

/** The digest as a verdict, lines after it, sections of capped lines and the link, in the order every sink shows them. */
export function digestDoc(d: Digest, l: DocLimits): DigestDoc {
  if (d.test) return { title: verdict(d), lead: [], sections: [], link: [] };
  const lead = [
    ...(d.rerun !== undefined ? [`re-run of ${clean(d.rerun.of)}: ${clean(d.rerun.newer)} is newer`] : []),
    ...d.problems.map((p) => clip(withoutIds(clean(p)), Math.max(l.line, 300))),
    ...countsLine(d),
  ];
  const shown = d.findings.top(l.findings);
  const resolved = d.resolved.top(l.resolved);
  const waivers = d.waivers.slice(0, l.others);
  const routes = d.outcome.failedRoutes.slice(0, l.others);
  const exports = d.exports.flatMap((e) => exportLine(e) ?? []);
  const changed = exports.slice(0, Math.max(l.others, 15));
  const sections: Section[] = [
    ...section(
      'Failed routes',
      d.outcome.failedRoutes.length,
      routes.map((r) => clip(`${clean(r.route)}: ${withoutIds(clean(r.error))}`, l.line)),
      routes.length,
    ),
    ...section(d.lifecycle ? 'New findings' : 'Findings', d.findings.length, grouped(shown, l.line), shown.length),
    ...section(
      'Resolved',
      d.resolved.length,
      resolved.map((f) => clip(`${personText(f.person)}: ${findingTitle(f)}`, l.line)),
      resolved.length,
    ),
    ...section(
      'Waivers',
      d.waivers.length,
      waivers.map((w) => waiverLine(w, l.line)),
      waivers.length,
    ),
    ...section(
      'Rules not evaluated',
      d.notEvaluated.length,
      d.notEvaluated
        .slice(0, l.others)
        .map((r) => clip(`${ruleTitle(r.rule)}: ${withoutIds(clean(r.reason))}`, l.line)),
      Math.min(l.others, d.notEvaluated.length),
    ),
    ...section('Changed since the night before', exports.length, changed, changed.length),
  ];
  return { title: verdict(d), lead, sections, link: linkLines(d) };
}

export function moreLine(n: number): string {
  return `and ${n} more`;
}

/** The document as plain text: the e-mail's text part. */
export function plainText(doc: DigestDoc): string {
  const out = [doc.title, ...doc.lead, ''];
  for (const s of doc.sections) {
    out.push(s.heading, ...s.lines.map((l) => `  ${l}`));
    if (s.more > 0) out.push(`  ${moreLine(s.more)}`);
    out.push('');
  }
  out.push(...doc.link);
  return `${out.join('\n')}\n`;
}
