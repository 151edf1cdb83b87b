/**
 * The findings over time (CONTRACT section 18, issue 45): what the states
 * against the night before and 1,000 waivers add to `--findings`, and what
 * the CSV of all findings adds to `svc-snapshot findings <dir>`, each as a
 * share of a replay's time. The night before is a replay with `--findings`
 * of the mutated collection (bench/mutate.mjs: a share of its records
 * changed, so some findings are new and some resolved), its manifest's time
 * a day earlier, alone in a directory where every measured night is written
 * beside it; the waivers are made from its findings: 600 by id, 300 by
 * subject prefix, 100 that match nothing (stale), all in force.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { formatISO } from 'date-fns/formatISO';
// Types only: harness.ts imports this module.
import type { Row, Stat } from './harness.js';
import { TARGETS } from './workload.js';

type Run = (args: readonly string[], opts: { workDir: string }) => Promise<{ ms: number; stdout: string }>;

export interface OverTimeContext {
  readonly bin: string;
  readonly workDir: string;
  readonly raw: string;
  /** Where the night before is, and each measured night is written beside it. */
  readonly parent: string;
  /** A directory with nothing beside: `--findings` there has no night before. */
  readonly alone: string;
  readonly waivers: string;
  readonly run: Run;
}

const WAIVERS = { byId: 600, bySubject: 300, stale: 100 };

/** The waivers file: YAML of 1,000 entries, made from the night before's findings. */
function waiversOf(findingsFile: string, expires: string): string {
  const report = JSON.parse(readFileSync(findingsFile, 'utf8')) as {
    findings: Array<{ id: string; rule: string; subject: { key: string[] } }>;
  };
  const entries: string[] = [];
  const entry = (rule: string, match: string, i: number) =>
    `  - rule: ${rule}\n    ${match}\n    reason: bench waiver ${i}\n    owner: bench@example.org\n    expires: ${expires}\n`;
  const found = report.findings;
  const seen = new Set<string>();
  for (let i = 0; i < found.length && entries.length < WAIVERS.byId; i += 7) {
    const f = found[i]!;
    entries.push(entry(f.rule, `id: ${f.id}`, entries.length));
  }
  for (let i = 3; i < found.length && entries.length < WAIVERS.byId + WAIVERS.bySubject; i += 11) {
    const f = found[i]!;
    const subject = JSON.stringify(f.subject.key.slice(0, 2));
    if (seen.has(`${f.rule} ${subject}`)) continue;
    seen.add(`${f.rule} ${subject}`);
    entries.push(entry(f.rule, `subject: ${subject}`, entries.length));
  }
  for (let i = 0; entries.length < WAIVERS.byId + WAIVERS.bySubject + WAIVERS.stale; i++)
    entries.push(entry('quota-exceeded', `subject: ["team|no-such-team-${i}"]`, entries.length));
  return `waivers:\n${entries.join('')}`;
}

export async function overTimeContext(
  bin: string,
  mutated: string,
  raw: string,
  parent: string,
  workDir: string,
  run: Run,
): Promise<OverTimeContext> {
  mkdirSync(parent, { recursive: true });
  const dir = join(parent, 'svc-snapshot-0-night-before');
  await run([bin, '--replay', mutated, '--out-dir', dir, '--findings', '--quiet'], { workDir });
  const file = join(dir, '_snapshot-manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as { time: string; date: string };
  const earlier = new Date(Date.parse(m.time) - 86_400_000);
  writeFileSync(
    file,
    `${JSON.stringify({ ...m, time: earlier.toISOString(), date: formatISO(earlier, { representation: 'date' }) }, null, 2)}\n`,
  );
  const waivers = join(workDir, 'waivers.yaml');
  const expires = formatISO(new Date(Date.now() + 90 * 86_400_000), { representation: 'date' });
  writeFileSync(waivers, waiversOf(join(dir, '_findings.json'), expires));
  const alone = join(workDir, 'over-time-alone');
  mkdirSync(alone, { recursive: true });
  return { bin, workDir, raw, parent, alone, waivers, run };
}

/**
 * One round: `--findings` with nothing beside it, then beside the night
 * before with the waivers (checked to hold states and waivers, else the
 * figure would be of nothing), then `findings <dir> --json` and `--format
 * csv` of that night.
 */
export async function overTimeRound(
  ctx: OverTimeContext,
  name: string,
): Promise<{ findingsMs: number; lifecycleMs: number; jsonMs: number; csvMs: number }> {
  const plain = join(ctx.alone, `svc-snapshot-${name}`);
  const night = join(ctx.parent, `svc-snapshot-${name}`);
  try {
    const opts = { workDir: ctx.workDir };
    const findings = await ctx.run([ctx.bin, '--replay', ctx.raw, '--out-dir', plain, '--findings', '--quiet'], opts);
    const lifecycle = await ctx.run(
      [ctx.bin, '--replay', ctx.raw, '--out-dir', night, '--findings', '--waivers', ctx.waivers, '--quiet'],
      opts,
    );
    const written = readFileSync(join(night, '_findings.json'), 'utf8');
    if (!written.includes('"previous": ') || !written.includes('"entries": 1000'))
      throw new Error('bench: the night beside the night before was not told against it, or without the 1,000 waivers');
    const json = await ctx.run([ctx.bin, 'findings', night, '--json', '--waivers', ctx.waivers], opts);
    const csv = await ctx.run([ctx.bin, 'findings', night, '--format', 'csv', '--waivers', ctx.waivers], opts);
    return { findingsMs: findings.ms, lifecycleMs: lifecycle.ms, jsonMs: json.ms, csvMs: csv.ms };
  } finally {
    rmSync(plain, { recursive: true, force: true });
    rmSync(night, { recursive: true, force: true });
  }
}

/** Whether this build has --waivers (src/findings/waivers.ts). */
export function overTimeSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'findings', 'waivers.js'));
}

export interface OverTimeSamples {
  readonly findings: number[];
  readonly lifecycle: number[];
  readonly json: number[];
  readonly csv: number[];
}

/** The two rows, each the time added (a median less another's) ÷ the replay's median. */
export function overTimeRows(
  s: OverTimeSamples,
  replay: Stat | undefined,
  stat: (xs: number[]) => Stat | undefined,
): Row[] {
  const added = (more: number[], less: number[]) => {
    const a = stat(more);
    const b = stat(less);
    return a && b && replay ? (a.median - b.median) / replay.median : undefined;
  };
  return [
    { figure: 'Baseline: --findings with no night before, in the same rounds', unit: 'ms', stat: stat(s.findings) },
    {
      figure: '--findings beside the night before, with 1,000 waivers (time added over --findings)',
      unit: 'ms',
      stat: stat(s.lifecycle),
      ratio: added(s.lifecycle, s.findings),
      ratioOf: 'added ÷ --replay',
      target: { op: '≤', value: TARGETS.lifecycleVsReplay },
    },
    { figure: 'Baseline: findings <dir> --json of that night', unit: 'ms', stat: stat(s.json) },
    {
      figure: 'findings <dir> --format csv, every finding (time added over findings <dir> --json)',
      unit: 'ms',
      stat: stat(s.csv),
      ratio: added(s.csv, s.json),
      ratioOf: 'added ÷ --replay',
      target: { op: '≤', value: TARGETS.findingsCsvVsReplay },
    },
  ];
}
