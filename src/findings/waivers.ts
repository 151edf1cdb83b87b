/**
 * Waivers (the file's form in docs/findings.md). The
 * file is read and checked whole when the option is read, before anything
 * else is (an unusable file is a usage error naming the line, exit 2, and
 * nothing is written); a waiver whose date has passed is no error: it simply
 * no longer applies.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node, type YAMLMap } from 'yaml';
import { UsageError } from '../errors.js';
import { readSmallFile, sha256Hex } from '../util/safe-read.js';
import { RULES } from './catalog.js';
import {
  findingWith,
  type CarriedFinding,
  type Finding,
  type WaiverMark,
  type WaiverNote,
  type WaiversSummary,
} from './evaluate.js';

/** A waivers file of a thousand entries is some 300 KB; past this it is not one. */
export const WAIVERS_MAX_BYTES = 4 * 1024 * 1024;
/** The default of --waivers-max-days: a year ahead, a leap year's day included. */
export const DEFAULT_WAIVERS_MAX_DAYS = 366;
const REASON_MAX = 1000;
const NAME_MAX = 200;
const DAY_MS = 86_400_000;
const FIELDS = ['rule', 'id', 'subject', 'reason', 'owner', 'expires'] as const;
/** Characters that could move a terminal's cursor, break a line or turn text around (C0, DEL, C1, bidi and invisible controls). */
const HOSTILE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/;

/** An entry of the file: its `line` (1-based) and fields (`expires` YYYY-MM-DD, as written). */
interface Waiver extends WaiverNote {
  readonly reason: string;
  /** The first instant the waiver no longer applies: the start (UTC) of the day after `expires`. */
  readonly endsAt: number;
}

export interface WaiversFile {
  readonly path: string;
  readonly sha256: string;
  readonly waivers: readonly Waiver[];
}

class WaiverProblem extends Error {
  constructor(
    readonly line: number,
    what: string,
  ) {
    super(what);
  }
}

function readWaiversBytes(path: string, from: string): Buffer {
  const fail = (what: string) => new UsageError(`${from} ${path}: ${what}`);
  const read = readSmallFile(path, { maxBytes: WAIVERS_MAX_BYTES, followLinks: false });
  if (Buffer.isBuffer(read)) return read;
  if (read.problem === 'not a regular file')
    throw fail('is not a regular file; give the path of a YAML or JSON waivers file');
  if (read.problem === 'too large')
    throw fail(`is larger than ${WAIVERS_MAX_BYTES / 1024 / 1024} MiB, which no waivers file is; nothing was read`);
  if (read.code === 'ELOOP' || read.code === 'EMLINK')
    throw fail('is a symbolic link; give the path of the waivers file itself');
  throw fail(`the waivers file cannot be read (${read.code}); give the path of a readable YAML or JSON file`);
}

/** `expires` as the first instant it no longer applies, or a problem: a calendar date YYYY-MM-DD is required. */
function endOf(text: string, line: number): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  const d = new Date(ms);
  if (!m || Number.isNaN(ms) || d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3]))
    throw new WaiverProblem(line, `expires ${JSON.stringify(text.slice(0, 40))} is not a date; write it as YYYY-MM-DD`);
  return ms + DAY_MS;
}

function text(node: unknown, field: string, line: number, max: number): string {
  if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '')
    throw new WaiverProblem(line, `${field} must be a non-empty text`);
  const value = node.value;
  if (value.length > max) throw new WaiverProblem(line, `${field} is longer than ${max} characters`);
  if (HOSTILE.test(value))
    throw new WaiverProblem(
      line,
      `${field} holds control, line-break or bidirectional characters; write plain text on one line`,
    );
  return value;
}

function subjectOf(node: unknown, line: number): string[] {
  const items = isSeq(node) ? node.items : isScalar(node) ? [node] : undefined;
  if (!items || items.length === 0)
    throw new WaiverProblem(line, 'subject must be a list of key values (the subject key, or its beginning)');
  return items.map((item) => text(item, 'subject', line, NAME_MAX * 5));
}

/** One entry of the list, checked. */
function waiverOf(entry: YAMLMap, line: number, lineOf: (n: Node) => number): Waiver {
  const get = (k: string) => entry.get(k, true) as unknown;
  for (const pair of entry.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key !== 'string' || !(FIELDS as readonly string[]).includes(key))
      throw new WaiverProblem(
        isScalar(pair.key) ? lineOf(pair.key) : line,
        `unknown field ${JSON.stringify(String(key).slice(0, 40))}; a waiver has ${FIELDS.join(', ')}`,
      );
  }
  const rule = text(get('rule'), 'rule', line, NAME_MAX);
  if (!RULES.some((r) => r.id === rule))
    throw new WaiverProblem(line, `rule ${JSON.stringify(rule)} is not a findings rule (${didYouMean(rule)})`);
  const hasId = get('id') !== undefined;
  const hasSubject = get('subject') !== undefined;
  if (hasId === hasSubject)
    throw new WaiverProblem(line, "give one match: id (a finding's id) or subject (its key values), not both nor none");
  const id = hasId ? text(get('id'), 'id', line, 36).toLowerCase() : undefined;
  if (id !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id))
    throw new WaiverProblem(line, "id is not a finding's id (a UUID, as _findings.json writes it)");
  const expiresNode = get('expires');
  if (expiresNode === undefined)
    throw new WaiverProblem(line, 'expires is missing; every waiver ends: give expires: YYYY-MM-DD');
  const expires = text(expiresNode, 'expires', line, 40);
  return {
    line,
    rule,
    ...(id !== undefined ? { id } : { subject: subjectOf(get('subject'), line) }),
    reason: text(get('reason'), 'reason', line, REASON_MAX),
    owner: text(get('owner'), 'owner', line, NAME_MAX),
    expires,
    endsAt: endOf(expires, line),
  };
}

function parseWaivers(source: string): Waiver[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const lineOf = (n: Node | undefined) => (n?.range ? lineCounter.linePos(n.range[0]).line : 1);
  const error = doc.errors[0];
  if (error) {
    const line = lineCounter.linePos(error.pos[0]).line;
    throw new WaiverProblem(line, `not YAML or JSON (${error.code.toLowerCase().replace(/_/g, ' ')})`);
  }
  const root = doc.contents;
  const list = isMap(root) ? (root.get('waivers', true) as unknown) : undefined;
  if (!isMap(root) || !isSeq(list))
    throw new WaiverProblem(lineOf(root ?? undefined), 'the file must hold a top-level waivers list (waivers: [...])');
  for (const pair of root.items)
    if (!isScalar(pair.key) || pair.key.value !== 'waivers')
      throw new WaiverProblem(lineOf(pair.key as Node), 'the file holds one member, waivers');
  const out: Waiver[] = [];
  const seen = new Map<string, number>();
  for (const item of list.items) {
    const line = lineOf(item as Node);
    if (!isMap(item))
      throw new WaiverProblem(line, 'each waiver is a mapping of rule, id or subject, reason, owner and expires');
    const w = waiverOf(item, line, lineOf);
    const key = JSON.stringify([w.rule, w.id ?? null, w.subject ?? null]);
    const before = seen.get(key);
    if (before !== undefined)
      throw new WaiverProblem(line, `the same rule and match as the waiver of line ${before}; keep one of them`);
    seen.set(key, line);
    out.push(w);
  }
  return out;
}

/** `--waivers <file>` / SVC_WAIVERS: the file read (never through a link) and checked whole; a usage error naming the line otherwise. */
export function loadWaivers(path: string, from: string): WaiversFile {
  if (path === '') throw new UsageError(`${from} is empty; give the path of a YAML or JSON waivers file`);
  const bytes = readWaiversBytes(path, from);
  let source: string;
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${from} ${path}: not UTF-8 text`);
  }
  try {
    return { path, sha256: sha256Hex(bytes), waivers: parseWaivers(source) };
  } catch (e) {
    if (!(e instanceof WaiverProblem)) throw e;
    throw new UsageError(`${from} ${path}, line ${e.line}: ${e.message}`);
  }
}

/** --waivers-max-days: a waiver ending further ahead of `today` than that is refused (exit 2), naming its line. */
export function checkWaiverDates(file: WaiversFile, maxDays: number, today: number, from: string): void {
  const limit = Math.floor(today / DAY_MS) * DAY_MS + maxDays * DAY_MS;
  for (const w of file.waivers) {
    if (w.endsAt - DAY_MS > limit)
      throw new UsageError(
        `${from} ${file.path}, line ${w.line}: expires ${w.expires} is more than ${maxDays} days ahead; ` +
          'a waiver is reviewed at least once a year (--waivers-max-days sets another limit)',
      );
  }
}

const note = (w: Waiver): WaiverNote => ({
  line: w.line,
  rule: w.rule,
  ...(w.id !== undefined ? { id: w.id } : { subject: w.subject! }),
  owner: w.owner,
  reason: w.reason,
  expires: w.expires,
});

const mark = (w: Waiver): WaiverMark => ({ reason: w.reason, owner: w.owner, expires: w.expires });

/** What a waiver is matched on: a finding of tonight, or one carried from the night before. */
type Matched = Pick<Finding, 'id' | 'rule' | 'subject'>;

/** The waivers by id, and by rule and first key value: a finding is compared with the few that can match it. */
function index(waivers: readonly Waiver[]) {
  const byId = new Map<string, Waiver[]>();
  const bySubject = new Map<string, Waiver[]>();
  const push = (m: Map<string, Waiver[]>, k: string, w: Waiver) => {
    const list = m.get(k);
    if (list) list.push(w);
    else m.set(k, [w]);
  };
  for (const w of waivers) {
    if (w.id !== undefined) push(byId, `${w.rule}\u0000${w.id}`, w);
    else push(bySubject, `${w.rule}\u0000${w.subject![0]!}`, w);
  }
  return (f: Matched): Waiver[] => {
    const out = [...(byId.get(`${f.rule}\u0000${f.id}`) ?? [])];
    for (const w of bySubject.get(`${f.rule}\u0000${f.subject.key[0] ?? ''}`) ?? []) {
      const s = w.subject!;
      if (s.length <= f.subject.key.length && s.every((v, i) => v === f.subject.key[i])) out.push(w);
    }
    return out;
  };
}

/**
 * The findings with their waivers, at the snapshot's time `now`: each finding
 * matched by a waiver in force is `waived` (the one ending last, if several),
 * one matched only by ended waivers carries `waiverEnded` (the one that ended
 * last); the summary lists the waivers that ended, those in force matching
 * nothing (stale; not those of a rule in `unevaluated`, which could not
 * look) and those ending within `expiringDays`. The findings `carried` from
 * the night before (a rule not evaluated tonight) are matched the same way:
 * tonight's file, not the night before's, says whether they are waived.
 */
export function applyWaivers(
  findings: readonly Finding[],
  file: WaiversFile,
  now: number,
  expiringDays: number,
  unevaluated: ReadonlySet<string> = new Set(),
  carried: readonly CarriedFinding[] = [],
): { findings: Finding[]; carried: CarriedFinding[]; summary: WaiversSummary } {
  const matching = index(file.waivers);
  const used = new Set<Waiver>();
  const pick = (list: Waiver[]) => list.reduce((a, b) => (b.endsAt > a.endsAt ? b : a));
  /** The waiver in force of `f`, if any (the waivers in force matching it are used, so not stale), and all matching it. */
  const waiverOf = (f: Matched) => {
    const all = matching(f);
    const inForce = all.filter((w) => w.endsAt > now);
    for (const w of inForce) used.add(w);
    return { all, inForce: inForce.length > 0 ? pick(inForce) : undefined };
  };
  const out = findings.map((f) => {
    const { all, inForce } = waiverOf(f);
    if (inForce) return findingWith(f, { waived: mark(inForce) });
    return all.length > 0 ? findingWith(f, { waiverEnded: mark(pick(all)) }) : f;
  });
  const carriedOut = carried.map((f): CarriedFinding => {
    const { waived: _before, ...rest } = f;
    const { inForce } = waiverOf(f);
    return inForce ? { ...rest, waived: mark(inForce) } : rest;
  });
  const soon = now + expiringDays * DAY_MS;
  const summary: WaiversSummary = {
    sha256: file.sha256,
    entries: file.waivers.length,
    stale: file.waivers.filter((w) => w.endsAt > now && !used.has(w) && !unevaluated.has(w.rule)).map(note),
    endingSoon: file.waivers.filter((w) => w.endsAt > now && w.endsAt <= soon).map(note),
    ended: file.waivers.filter((w) => w.endsAt <= now).map(note),
  };
  return { findings: out, carried: carriedOut, summary };
}

/** `did you mean <rule>?` for the rule nearest a mistyped one (a few letters off), else where the rules are listed. */
function didYouMean(typed: string): string {
  let best: { id: string; d: number } | undefined;
  for (const r of RULES) {
    const d = editDistance(typed.toLowerCase(), r.id);
    if (!best || d < best.d) best = { id: r.id, d };
  }
  return best && best.d <= Math.max(2, Math.floor(typed.length / 4))
    ? `did you mean ${best.id}?`
    : 'docs/findings.md lists them';
}

/** Levenshtein distance: insertions, deletions and substitutions, each 1. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}
