/**
 * The digest of one run (docs/notify.md): the one typed input every sink
 * renders. It is built from what the command knew: the outcome, the failed
 * routes, the change set against the previous snapshot (src/diff) and the
 * findings report. The findings' lifecycle fields (docs/findings.md: `id`,
 * `display`, `state`, `firstSeen`, `waived`, the `resolved` list) are read by
 * those names where the report has them; without them every finding is shown
 * as it is, with no new/resolved split.
 */
import { hash } from 'node:crypto';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { escapeControl } from '../util/escape.js';
import { nightCounts, type NightCounts } from '../findings/counts.js';
import type { NotifyOn, Severity } from '../config/values.js';
import type { ChangeSet } from '../diff/types.js';
import type { FindingIn, FindingsIn, WaiverNote } from '../findings/file.js';

/** What a command tells the digest of a run that ended (published, or not). */
export interface RunNotice {
  readonly command: 'snapshot' | 'collect' | 'audit';
  readonly site: string | undefined;
  /** The snapshot's (collection's) time, else when the run ended; ISO 8601 UTC. */
  readonly time: string;
  readonly exitCode: number;
  /** Why the run failed (exit 1, 2, 3), as it told the user. */
  readonly failure?: string;
  readonly failedRoutes?: ReadonlyArray<{ readonly route: string; readonly error: string }>;
  /** Where the output was published. */
  readonly outDir?: string;
  readonly reportFile?: string;
  /** Records per export, and whether each is available. */
  readonly exports?: ReadonlyArray<{ readonly export: string; readonly count: number; readonly available: boolean }>;
  readonly previous?: { readonly dir: string; readonly changes?: ChangeSet };
  readonly findings?: FindingsIn;
  /** A night older than the newest of its site: `re-run of <of>: <newer> is newer`, right after the verdict. */
  readonly rerun?: { readonly of: string; readonly newer: string };
  /** Problems of the configuration that concerns only what comes after publishing, one a line, after the verdict. */
  readonly problems?: readonly string[];
}

/** A finding of the digest: every text in it already cleaned (`escapeControl`), as text.ts's `clean` would. */
export interface DigestFinding {
  readonly id: string;
  readonly rule: string;
  readonly severity: Severity;
  /** The names a person reads (the finding's `display`), else the subject's export and key. */
  readonly name: string;
  readonly detail: string;
  /** Who acts on it, as a person reads it: the user's name, else the team's or the project's. */
  readonly person: string;
  /** The display names other than the person's (project, requirement, level, VM), for the text forms. */
  readonly context: string;
  readonly state?: 'new' | 'open' | 'resolved';
  readonly firstSeen?: string;
  readonly waived?: FindingIn['waived'];
}

/**
 * Findings as the report has them, and the first of them in the order the
 * sinks show them: a sink shows the top few (Slack 20, the webhook 1,000) and
 * counts the rest, so only those shown are made DigestFindings.
 */
export interface FindingList {
  readonly length: number;
  /** Every one, in the report's order, its texts not cleaned yet (Alertmanager's alerts are made from these). */
  readonly all: readonly FindingIn[];
  /** Each one's name (`nameOf`) cleaned, in `all`'s order: made once, for the list's order and for the alerts. */
  names(): readonly string[];
  /** The first `n`, most severe first, then by rule, then by name. */
  top(n: number): readonly DigestFinding[];
}

export interface Digest {
  /** `notify --test`: a short message that only says the target is reached. */
  readonly test?: boolean;
  readonly command: RunNotice['command'];
  readonly site: string;
  readonly time: string;
  readonly outcome: {
    readonly exitCode: number;
    readonly state: 'complete' | 'partial' | 'failed';
    readonly failure?: string;
    readonly failedRoutes: ReadonlyArray<{ readonly route: string; readonly error: string }>;
  };
  readonly outDir?: string;
  readonly reportFile?: string;
  readonly previousDir?: string;
  readonly exports: ReadonlyArray<{
    readonly export: string;
    readonly count: number;
    readonly available: boolean;
    readonly added?: number;
    readonly removed?: number;
    readonly changed?: number;
  }>;
  readonly hasChanges: boolean;
  /** Whether the findings carry their lifecycle (new, open, resolved): then `findings` lists the new ones, `resolved` the gone ones. */
  readonly lifecycle: boolean;
  readonly findingsEvaluated: boolean;
  /** Active (not waived) findings: the new ones with a lifecycle, all of them without. */
  readonly findings: FindingList;
  /** Every active finding, for Alertmanager (which wants the open ones too). */
  readonly active: FindingList;
  /** Waived findings, those carried from the night before included: their alerts are ended. */
  readonly waived: FindingList;
  readonly resolved: FindingList;
  readonly openCount: number;
  readonly notEvaluated: ReadonlyArray<{ readonly rule: string; readonly reason: string }>;
  readonly waiversEndingSoon: readonly WaiverNote[];
  /** The night's one set of counts (src/findings/counts.ts), when findings were evaluated. */
  readonly counts?: NightCounts;
  /** The waivers a person looks at again: ending soon, ended, matching nothing; each with who the waived findings are. */
  readonly waivers: ReadonlyArray<{
    readonly kind: 'ending soon' | 'ended' | 'stale';
    readonly waiver: WaiverNote;
    readonly who?: string;
  }>;
  readonly rerun?: RunNotice['rerun'];
  readonly problems: readonly string[];
  /** Where a person opens the night: `<report-url>/<dir>/` (and the report in it), else `<hostname>:<path>`. */
  readonly link?: { readonly snapshot: string; readonly report?: string };
}

/** A finding's stable id: its own `id`, else a hash of the rule and the keys (stable while the finding is). */
export function idOf(f: FindingIn): string {
  if (f.id !== undefined && f.id !== '') return f.id;
  const keys = [f.subject, ...(f.related ?? [])].map((r) => `${r.export}\u0000${r.key.join('\u0000')}`);
  return hash('sha256', `${f.rule}\u0001${keys.join('\u0001')}`, 'hex').slice(0, 32);
}

/** The names of the finding's `display` (strings and numbers, in its order), else the subject's export and key. */
export function nameOf(f: FindingIn): string {
  let name = '';
  for (const v of Object.values(f.display ?? {}))
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') name = name === '' ? `${v}` : `${name} · ${v}`;
  return name !== '' ? name : `${f.subject.export} ${f.subject.key.join(' / ')}`;
}

const PERSON_KEYS = ['user', 'team', 'project'] as const;

/** Who acts on a finding: the first of its display's user, team and project; its other names are its context. */
function personOf(f: FindingIn): { person: string; context: string } {
  const display = (f.display ?? {}) as Record<string, unknown>;
  const key = PERSON_KEYS.find((k) => typeof display[k] === 'string' && display[k] !== '');
  const rest: string[] = [];
  for (const [k, v] of Object.entries(display)) {
    if (k === key || k === 'email') continue;
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') rest.push(`${v}`);
  }
  return { person: key !== undefined ? (display[key] as string) : '', context: rest.join(', ') };
}

/** A function that cleans a rule's id once for each rule: a report has tens of thousands of findings of a few rules. */
export function ruleCleaner(): (rule: string) => string {
  const cleaned = new Map<string, string>();
  return (rule) => {
    let c = cleaned.get(rule);
    if (c === undefined) cleaned.set(rule, (c = escapeControl(rule)));
    return c;
  };
}

/** A finding as every sink shows it: its texts cleaned once here (control characters escaped), never again. */
function toDigest(f: FindingIn, name: string, state?: DigestFinding['state']): DigestFinding {
  const s = state ?? f.state;
  const { person, context } = personOf(f);
  return {
    id: escapeControl(idOf(f)),
    rule: escapeControl(f.rule),
    severity: f.severity,
    name,
    detail: escapeControl(f.detail),
    person: escapeControl(person),
    context: escapeControl(context),
    ...(s !== undefined ? { state: s } : {}),
    ...(f.firstSeen !== undefined ? { firstSeen: escapeControl(f.firstSeen) } : {}),
    ...(f.waived !== undefined ? { waived: f.waived } : {}),
  };
}

/** Most severe first, then rule, then name: the order lists are capped in. */
const RANK: Readonly<Record<Severity, number>> = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The digest's order of `all[a]` and `all[b]` on the cleaned texts, as the sinks show them. */
function findingOrder(all: readonly FindingIn[], names: readonly string[]): (a: number, b: number) => number {
  const rule = ruleCleaner();
  const rules = all.map((f) => rule(f.rule));
  return (a, b) =>
    RANK[all[a]!.severity] - RANK[all[b]!.severity] ||
    compareText(rules[a]!, rules[b]!) ||
    compareText(names[a]!, names[b]!);
}

/**
 * The first `n` of `items` as a stable sort by `order` would put them,
 * without sorting the rest: each item is compared with the last one kept, and
 * inserted after its equals when it comes before.
 */
export function firstInOrder<T>(items: readonly T[], n: number, order: (a: T, b: T) => number): T[] {
  const kept: T[] = [];
  if (n <= 0) return kept;
  for (const x of items) {
    if (kept.length === n && order(x, kept[n - 1]!) >= 0) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(x, kept[mid]!) < 0) hi = mid;
      else lo = mid + 1;
    }
    kept.splice(lo, 0, x);
    if (kept.length > n) kept.pop();
  }
  return kept;
}

/** A list whose first findings are made when a sink asks for them; the longest asked for is kept for the next. */
function findingList(all: readonly FindingIn[], state?: DigestFinding['state']): FindingList {
  let names: readonly string[] | undefined;
  let made: readonly DigestFinding[] = [];
  const list: FindingList = {
    length: all.length,
    all,
    names: () => (names ??= all.map((f) => escapeControl(nameOf(f)))),
    top(n) {
      if (n > made.length && made.length < all.length) {
        const name = list.names();
        const first = firstInOrder([...all.keys()], n, findingOrder(all, name));
        made = first.map((i) => toDigest(all[i]!, name[i]!, state));
      }
      return made.slice(0, n);
    },
  };
  return list;
}

function outcomeState(n: RunNotice): Digest['outcome']['state'] {
  if (n.outDir === undefined || ![0, 4, 5, 6].includes(n.exitCode)) return 'failed';
  return n.exitCode === 4 ? 'partial' : 'complete';
}

function exportsOf(n: RunNotice): Digest['exports'] {
  const diffs = new Map((n.previous?.changes?.exports ?? []).map((d) => [d.export, d]));
  return (n.exports ?? []).map((e) => {
    const d = diffs.get(e.export);
    return { ...e, ...(d ? { added: d.counts.added, removed: d.counts.removed, changed: d.counts.changed } : {}) };
  });
}

function findingsPart(f: FindingsIn | undefined) {
  const all = f?.findings ?? [];
  const lifecycle = all.some((x) => x.state !== undefined) || f?.resolved !== undefined;
  const active = all.filter((x) => x.waived === undefined);
  // A rule that could not look tonight does not end its alerts (docs/findings.md), unless tonight's waivers waive them.
  const carried = (f?.carried ?? []).filter((x) => x.waived === undefined);
  const carriedWaived = (f?.carried ?? []).filter((x) => x.waived !== undefined);
  // Without a lifecycle the shown findings are the active ones: one list, its names made once.
  const activeList = findingList(carried.length > 0 ? [...active, ...carried] : active);
  return {
    lifecycle,
    findingsEvaluated: f !== undefined,
    findings: lifecycle ? findingList(active.filter((x) => x.state === 'new')) : activeList,
    active: activeList,
    waived: findingList([...all.filter((x) => x.waived !== undefined), ...carriedWaived]),
    resolved: findingList(f?.resolved ?? [], 'resolved'),
    openCount: lifecycle ? active.filter((x) => x.state !== 'new').length : 0,
    notEvaluated: (f?.rules ?? []).filter((r) => !r.evaluated).map((r) => ({ rule: r.id, reason: r.reason ?? '' })),
    waiversEndingSoon: f?.waivers?.endingSoon ?? [],
    ...(f !== undefined ? { counts: nightCounts(f) } : {}),
    waivers: waiversOf(f),
  };
}

/**
 * The waivers to look at again, each with the names of the findings it
 * matches (tonight's, else the resolved ones), never its id or key list:
 * those ending soon, those ended (a finding they waived is active again),
 * those matching nothing.
 */
function waiversOf(f: FindingsIn | undefined): Digest['waivers'] {
  const w = f?.waivers;
  if (w === undefined) return [];
  const pool = [...(f?.findings ?? []), ...(f?.resolved ?? [])];
  const who = (note: WaiverNote): string | undefined => {
    const match = pool.find(
      (x) =>
        x.rule === note.rule &&
        (note.id !== undefined
          ? x.id === note.id
          : note.subject !== undefined && note.subject.every((k, i) => x.subject.key[i] === k)),
    );
    return match !== undefined ? escapeControl(personOf(match).person || nameOf(match)) : undefined;
  };
  const out: Array<Digest['waivers'][number]> = [];
  for (const [kind, list] of [
    ['ending soon', w.endingSoon],
    ['ended', w.ended],
    ['stale', w.stale],
  ] as const) {
    for (const waiver of list ?? []) {
      if (kind === 'ended' && !endedSince(waiver, f?.previous?.time)) continue;
      const name = who(waiver);
      out.push({ kind, waiver, ...(name !== undefined ? { who: name } : {}) });
    }
  }
  return out;
}

/**
 * Whether an ended waiver ended since the night before (it was still in force at that night's time: a waiver
 * holds to the end of its `expires` day, UTC), so that it is news; without a night before, every ended one is.
 */
function endedSince(waiver: WaiverNote, previousTime: string | undefined): boolean {
  if (previousTime === undefined) return true;
  const end = Date.parse(`${waiver.expires}T00:00:00Z`) + 24 * 3600_000;
  const before = Date.parse(previousTime);
  return Number.isNaN(end) || Number.isNaN(before) || end > before;
}

/** Where a person opens the night: under --report-url, else this host's name and the directory's absolute path. */
function linkOf(n: RunNotice, reportUrl: string | undefined): Digest['link'] {
  if (n.outDir === undefined) return undefined;
  const name = basename(n.outDir);
  const report = n.reportFile !== undefined ? basename(n.reportFile) : undefined;
  if (reportUrl !== undefined) {
    const base = `${reportUrl.replace(/\/+$/, '')}/${encodeURIComponent(name)}/`;
    return { snapshot: base, ...(report !== undefined ? { report: `${base}${encodeURIComponent(report)}` } : {}) };
  }
  const at = `${hostname()}:${n.outDir}`;
  return { snapshot: at, ...(n.reportFile !== undefined ? { report: `${hostname()}:${n.reportFile}` } : {}) };
}

export function buildDigest(n: RunNotice, reportUrl?: string): Digest {
  return {
    command: n.command,
    site: n.site ?? 'unknown site',
    time: n.time,
    outcome: {
      exitCode: n.exitCode,
      state: outcomeState(n),
      ...(n.failure !== undefined ? { failure: n.failure } : {}),
      failedRoutes: n.failedRoutes ?? [],
    },
    ...(n.outDir !== undefined ? { outDir: n.outDir } : {}),
    ...(n.reportFile !== undefined ? { reportFile: n.reportFile } : {}),
    ...(n.previous !== undefined ? { previousDir: n.previous.dir } : {}),
    exports: exportsOf(n),
    hasChanges: n.previous?.changes?.hasChanges ?? false,
    ...findingsPart(n.findings),
    ...(n.rerun !== undefined ? { rerun: n.rerun } : {}),
    problems: n.problems ?? [],
    ...(n.outDir !== undefined ? { link: linkOf(n, reportUrl) } : {}),
  };
}

/**
 * Whether chat, e-mail and webhooks get this digest (`--notify-on`): a failed
 * or partial run always; otherwise as asked. Without the findings' lifecycle
 * every active finding counts as news, since none can be told apart as old.
 */
export function worthSending(d: Digest, on: readonly NotifyOn[]): boolean {
  if (d.outcome.state !== 'complete' || on.includes('always')) return true;
  if (on.includes('changes') && d.hasChanges) return true;
  return on.includes('findings') && (d.findings.length > 0 || d.resolved.length > 0);
}
