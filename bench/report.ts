/**
 * The report's figures (CONTRACT section 16, issue 37: the page adds at most
 * 0.3× a replay's time, stays under 5 MB whatever the site's size, and with
 * a history of 60 nights adds at most 0.5× a replay). The night before is a
 * replay of a second collection with DIFF_CHANGED_SHARE of its records
 * changed (bench/mutate.mjs), its manifest's time a day earlier, alone in a
 * directory where every measured page is written beside it: `--format html`
 * finds it there as the previous snapshot (findPreviousSnapshot) and the page
 * holds a realistic night's changes, not a comparison of identical files.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { formatISO } from 'date-fns/formatISO';
// Types only: harness.ts imports this module.
import type { Row, Stat } from './harness.js';
import { TARGETS } from './workload.js';

type Run = (args: readonly string[], opts: { workDir: string }) => Promise<{ ms: number; stdout: string }>;

/** Whether this build has `--format html` (src/report). */
export function reportSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'report', 'index.js'));
}

export interface ReportContext {
  readonly bin: string;
  readonly workDir: string;
  /** The collection every page is a replay of (the same as the --replay baseline's). */
  readonly raw: string;
  /** The directory holding the night before, where the pages are written. */
  readonly parent: string;
  /** The night before's directory name (the page names it when it compared with it). */
  readonly before: string;
  readonly run: Run;
}

/**
 * The night before: `mutated` (a collection of the same site with a share of
 * its records changed) replayed into `<parent>/svc-snapshot-0-night-before`,
 * its manifest's time and date a day earlier than the collection's, so that
 * it is older than every page's snapshot.
 */
export async function nightBefore(
  bin: string,
  mutated: string,
  raw: string,
  parent: string,
  workDir: string,
  run: Run,
): Promise<ReportContext> {
  mkdirSync(parent, { recursive: true });
  const before = 'svc-snapshot-0-night-before';
  const dir = join(parent, before);
  await run([bin, '--replay', mutated, '--out-dir', dir, '--quiet'], { workDir });
  const file = join(dir, '_snapshot-manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as { time: string; date: string };
  const earlier = new Date(Date.parse(m.time) - 86_400_000);
  writeFileSync(
    file,
    `${JSON.stringify({ ...m, time: earlier.toISOString(), date: formatISO(earlier, { representation: 'date' }) }, null, 2)}\n`,
  );
  return { bin, workDir, raw, parent, before, run };
}

/**
 * One page: `--replay <raw> --format html [extra]` into a new directory beside
 * the night before; its time and the page's size (the page is the manifest's
 * `files` entry ending in .html). The page must name the night before (it was
 * compared with it) and, with `nights`, show that many nights of history:
 * else the figure would be of a page without what it is about. The
 * directory is removed after.
 */
export async function reportPage(
  ctx: ReportContext,
  name: string,
  extra: readonly string[] = [],
  nights?: number,
): Promise<{ ms: number; pageBytes: number }> {
  const out = join(ctx.parent, `svc-snapshot-${name}`);
  try {
    const res = await ctx.run(
      [ctx.bin, '--replay', ctx.raw, '--out-dir', out, '--format', 'html', ...extra, '--quiet'],
      { workDir: ctx.workDir },
    );
    const manifest = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')) as {
      files?: Array<{ name: string }>;
    };
    const page = manifest.files?.find((f) => f.name.endsWith('.html'));
    if (!page) throw new Error(`${out}: the manifest's files list no .html page`);
    const text = readFileSync(join(out, page.name), 'utf8');
    if (!text.includes(ctx.before))
      throw new Error(
        `${out}/${page.name} does not name ${ctx.before}: the page was not compared with the night before`,
      );
    if (nights !== undefined && !text.includes(`${nights} nights`))
      throw new Error(`${out}/${page.name} does not show ${nights} nights of history`);
    return { ms: res.ms, pageBytes: statSync(join(out, page.name)).size };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The page-size row: the page's size against the cap. */
export function pageSizeRow(
  figure: string,
  bytes: readonly number[],
  stat: (samples: readonly number[]) => Stat | undefined,
): Row {
  const s = stat(bytes.map((b) => b / 1e6));
  return {
    figure,
    unit: 'MB',
    stat: s,
    ratio: s && s.median / TARGETS.reportPageMB,
    ratioOf: `÷ ${TARGETS.reportPageMB} MB`,
    target: { op: '≤', value: 1 },
  };
}

export interface ReportHistoryContext extends ReportContext {
  /** A SQLite history database holding `nights` nights of this site, the replay's own among them (loaded before). */
  readonly db: string;
  readonly nights: number;
  readonly runs: number;
  readonly stat: (samples: readonly number[]) => Stat | undefined;
}

/**
 * The page with a history database: in each round, a --replay (the
 * baseline), the same replay with `--history <db>` (after publishing it loads
 * the night, which the database already holds: every file checked, nothing
 * stored) and the page with `--history <db>` (the same load after it). What
 * the page adds is the difference of the last two, so that the load a
 * snapshot with --history makes either way is not counted as the report's.
 */
export async function benchReportHistory(ctx: ReportHistoryContext): Promise<Row[]> {
  const { bin, workDir, run } = ctx;
  const history = `--history=${ctx.db}`;
  const replay: number[] = [];
  const load: number[] = [];
  const page: number[] = [];
  const bytes: number[] = [];
  for (let r = 0; r < ctx.runs; r++) {
    const plain = join(workDir, `report-replay-${r}`);
    replay.push((await run([bin, '--replay', ctx.raw, '--out-dir', plain, '--quiet'], { workDir })).ms);
    rmSync(plain, { recursive: true, force: true });
    const loaded = join(workDir, `report-load-${r}`);
    load.push((await run([bin, '--replay', ctx.raw, '--out-dir', loaded, history, '--quiet'], { workDir })).ms);
    rmSync(loaded, { recursive: true, force: true });
    const p = await reportPage(ctx, `history-${r}`, [history], ctx.nights);
    page.push(p.ms);
    bytes.push(p.pageBytes);
  }
  const b = ctx.stat(replay);
  const l = ctx.stat(load);
  const h = ctx.stat(page);
  const n = ctx.nights;
  return [
    { figure: 'Baseline: --replay, beside the report runs with a history', unit: 'ms', stat: b },
    {
      figure: `--replay --history <db> of ${n} nights, the night already loaded (every file checked, nothing stored)`,
      unit: 'ms',
      stat: l,
    },
    {
      figure: `--replay --format html --history <db> with ${n} nights (time added over --replay --history <db>)`,
      unit: 'ms',
      stat: h,
      ratio: h && l && b ? (h.median - l.median) / b.median : undefined,
      ratioOf: 'added ÷ --replay',
      target: { op: '≤', value: TARGETS.reportWithHistoryVsReplay },
    },
    pageSizeRow(`Report page size, with ${n} nights of history`, bytes, ctx.stat),
  ];
}
