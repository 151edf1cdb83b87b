/**
 * The history database's figures (CONTRACT section 11) on SQLite: a first
 * load against the snapshot's build, a night with 1 % of the records changed
 * against a first load, the file after 30 such nights against the file after
 * the first, and `history as-of` against a replay; with `includeVms`, the
 * two loads again on the same nights built with `--include vms`, against that
 * build. Every ratio is of medians, and each baseline is measured in the same
 * rounds as the figure it divides.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { addDays } from 'date-fns/addDays';
import { formatISO } from 'date-fns/formatISO';
// Types only: harness.ts imports this module.
import type { Row, SectionContext, Stat } from './harness.js';

export const HISTORY_TARGETS = {
  /** history load of the first night ≤ this × the snapshot's build (--replay). */
  firstLoadVsBuild: 2,
  /** history load of a night with 1 % changes, every export file checked against its sha256, ≤ this × the first load. */
  nightVsFirstLoad: 0.6,
  /** SQLite file after 30 nights with 1 % changes ≤ this × after the first night. */
  thirtyNightsVsFirst: 2,
  /** history as-of ≤ this × a replay. */
  asOfVsReplay: 1.5,
};

export const HISTORY_NIGHTS = 30;
export const HISTORY_CHANGED_SHARE = 0.01;

/** `raw` is the collection of the first night (built by --replay, which is also each figure's baseline). */
export interface HistoryBenchContext extends SectionContext {
  benchDir: string;
  /** Nights loaded after the first; default HISTORY_NIGHTS. The smoke test takes 2: it checks the code path, not the figure. */
  nightCount?: number;
  /** Also the first night and a night with 1 % changes built and loaded with --include vms (a build that has it). */
  includeVms?: boolean;
  /**
   * Also a database of this many nights for the report's figure with a
   * history (bench/report.ts), returned as `reportDb`: the first night and
   * the nights after it as above, more made on from the last when the nights
   * above are too few.
   */
  reportNights?: number;
}

/** The SQLite file with its write-ahead log, if one is left. */
function sqliteBytes(file: string): number {
  let n = statSync(file).size;
  for (const extra of [`${file}-wal`]) if (existsSync(extra)) n += statSync(extra).size;
  return n;
}

function copyDb(from: string, to: string): void {
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}

export async function benchHistory(
  ctx: HistoryBenchContext,
): Promise<{ rows: Row[]; notes: string[]; reportDb?: string }> {
  const { bin, workDir, run } = ctx;
  const nightCount = ctx.nightCount ?? HISTORY_NIGHTS;
  // as-of is measured at the middle night.
  if (!Number.isInteger(nightCount) || nightCount < 2 || nightCount % 2 !== 0)
    throw new Error(`history nights: an even number of at least 2, not ${nightCount}`);
  const rows: Row[] = [];
  const notes: string[] = [];
  const night0 = join(workDir, 'history-night-0');
  await run([bin, '--replay', ctx.raw, '--out-dir', night0, '--quiet'], { workDir });
  // The nights after the first are dated from its own time (taken when the bench collected it), never from a fixed day.
  const start = new Date(
    (JSON.parse(readFileSync(join(night0, '_snapshot-manifest.json'), 'utf8')) as { time: string }).time,
  );
  const nights = [night0];
  let changed = 0;
  let total = 0;
  for (let n = 1; n <= nightCount; n++) {
    const day = addDays(start, n);
    const dir = join(workDir, `history-night-${n}`);
    const out = await run(
      [
        join(ctx.benchDir, 'history-night.mjs'),
        nights[n - 1]!,
        dir,
        String(HISTORY_CHANGED_SHARE),
        day.toISOString(),
        formatISO(day, { representation: 'date' }),
      ],
      { workDir },
    );
    ({ changed, total } = JSON.parse(out.stdout) as { changed: number; total: number });
    nights.push(dir);
  }
  ctx.log(`history: ${nightCount} nights made, ${changed} of ${total} records changed a night`);
  // The night after the first with nothing changed: every export's hash is the night before's, so the load stores no
  // record and reads each file only to check it (CONTRACT section 11): what the check costs a night.
  const unchanged = join(workDir, 'history-night-unchanged');
  const day1 = addDays(start, 1);
  await run(
    [
      join(ctx.benchDir, 'history-night.mjs'),
      night0,
      unchanged,
      '0',
      day1.toISOString(),
      formatISO(day1, { representation: 'date' }),
    ],
    { workDir },
  );
  // The same first night and next night with the VM inventory (--include vms): VM configs and running VMs change like the rest.
  const vms = ['--include', 'vms'];
  const night0Vms = join(workDir, 'history-night-0-vms');
  const night1Vms = join(workDir, 'history-night-1-vms');
  if (ctx.includeVms) {
    await run([bin, '--replay', ctx.raw, '--out-dir', night0Vms, ...vms, '--quiet'], { workDir });
    await run(
      [
        join(ctx.benchDir, 'history-night.mjs'),
        night0Vms,
        night1Vms,
        String(HISTORY_CHANGED_SHARE),
        day1.toISOString(),
        formatISO(day1, { representation: 'date' }),
      ],
      { workDir },
    );
  }

  // The build baseline is measured in the same rounds as the loads, so that both see the same load on the machine.
  const build: number[] = [];
  const first: number[] = [];
  const second: number[] = [];
  const same: number[] = [];
  const asOf: number[] = [];
  const buildVms: number[] = [];
  const firstVms: number[] = [];
  const secondVms: number[] = [];
  const firstDb = join(workDir, 'history-first.sqlite');
  for (let r = 0; r < ctx.runs; r++) {
    const rebuilt = join(workDir, `history-build-${r}`);
    build.push((await run([bin, '--replay', ctx.raw, '--out-dir', rebuilt, '--quiet'], { workDir })).ms);
    rmSync(rebuilt, { recursive: true, force: true });
    const db = join(workDir, `history-${r}.sqlite`);
    first.push((await run([bin, 'history', 'load', night0, `--history=${db}`, '--quiet'], { workDir })).ms);
    if (r === 0) copyDb(db, firstDb);
    const other = join(workDir, `history-${r}-unchanged.sqlite`);
    copyDb(db, other);
    second.push((await run([bin, 'history', 'load', nights[1]!, `--history=${db}`, '--quiet'], { workDir })).ms);
    same.push((await run([bin, 'history', 'load', unchanged, `--history=${other}`, '--quiet'], { workDir })).ms);
    for (const f of [db, other]) for (const extra of ['', '-wal', '-shm']) rmSync(`${f}${extra}`, { force: true });
    if (ctx.includeVms) {
      const rebuiltVms = join(workDir, `history-build-vms-${r}`);
      buildVms.push(
        (await run([bin, '--replay', ctx.raw, '--out-dir', rebuiltVms, ...vms, '--quiet'], { workDir })).ms,
      );
      rmSync(rebuiltVms, { recursive: true, force: true });
      const dbVms = join(workDir, `history-vms-${r}.sqlite`);
      firstVms.push(
        (await run([bin, 'history', 'load', night0Vms, ...vms, `--history=${dbVms}`, '--quiet'], { workDir })).ms,
      );
      secondVms.push(
        (await run([bin, 'history', 'load', night1Vms, ...vms, `--history=${dbVms}`, '--quiet'], { workDir })).ms,
      );
      for (const extra of ['', '-wal', '-shm']) rmSync(`${dbVms}${extra}`, { force: true });
    }
  }
  const firstBytes = sqliteBytes(firstDb);
  const all = join(workDir, `history-${nightCount}.sqlite`);
  copyDb(firstDb, all);
  await run([bin, 'history', 'load', ...nights.slice(1), `--history=${all}`, '--quiet'], { workDir });
  const thirtyBytes = sqliteBytes(all);
  const middle = formatISO(addDays(start, nightCount / 2), { representation: 'date' });
  const replayAgain: number[] = [];
  for (let r = 0; r < ctx.runs; r++) {
    const rebuilt = join(workDir, `history-replay-${r}`);
    replayAgain.push((await run([bin, '--replay', ctx.raw, '--out-dir', rebuilt, '--quiet'], { workDir })).ms);
    rmSync(rebuilt, { recursive: true, force: true });
    const out = join(workDir, `history-asof-${r}`);
    asOf.push(
      (await run([bin, 'history', 'as-of', middle, `--history=${all}`, '--out-dir', out, '--quiet'], { workDir })).ms,
    );
    rmSync(out, { recursive: true, force: true });
  }
  const ratio = (a: Stat | undefined, b: Stat | undefined) => (a && b ? a.median / b.median : undefined);
  const b = ctx.stat(build);
  const rb = ctx.stat(replayAgain);
  const f = ctx.stat(first);
  const s = ctx.stat(second);
  const u = ctx.stat(same);
  const a = ctx.stat(asOf);
  rows.push({ figure: 'Baseline: --replay build of the first night, beside the loads', unit: 'ms', stat: b });
  rows.push({
    figure: 'history load, first night (SQLite)',
    unit: 'ms',
    stat: f,
    ratio: ratio(f, b),
    ratioOf: '÷ --replay build',
    target: { op: '≤', value: HISTORY_TARGETS.firstLoadVsBuild },
  });
  rows.push({
    figure: `history load, a night with ${HISTORY_CHANGED_SHARE * 100} % changes, every file checked`,
    unit: 'ms',
    stat: s,
    ratio: ratio(s, f),
    ratioOf: '÷ first load',
    target: { op: '≤', value: HISTORY_TARGETS.nightVsFirstLoad },
  });
  rows.push({
    figure: 'history load, an unchanged night: every file checked, nothing stored',
    unit: 'ms',
    stat: u,
    ratio: ratio(u, f),
    ratioOf: '÷ first load',
  });
  rows.push({ figure: 'SQLite file after the first night', unit: 'MB', stat: ctx.stat([firstBytes / 1e6]) });
  rows.push({
    figure: `SQLite file after ${nightCount} more nights with ${HISTORY_CHANGED_SHARE * 100} % changes`,
    unit: 'MB',
    stat: ctx.stat([thirtyBytes / 1e6]),
    ratio: thirtyBytes / firstBytes,
    ratioOf: '÷ first night',
    target: { op: '≤', value: HISTORY_TARGETS.thirtyNightsVsFirst },
  });
  if (ctx.includeVms) {
    const bv = ctx.stat(buildVms);
    const fv = ctx.stat(firstVms);
    const sv = ctx.stat(secondVms);
    rows.push({
      figure: 'Baseline: --replay --include vms build of the first night, beside the loads',
      unit: 'ms',
      stat: bv,
    });
    rows.push({
      figure: 'history load --include vms, first night (SQLite)',
      unit: 'ms',
      stat: fv,
      ratio: ratio(fv, bv),
      ratioOf: '÷ --replay --include vms build',
      target: { op: '≤', value: HISTORY_TARGETS.firstLoadVsBuild },
    });
    rows.push({
      figure: `history load --include vms, a night with ${HISTORY_CHANGED_SHARE * 100} % changes, every file checked`,
      unit: 'ms',
      stat: sv,
      ratio: ratio(sv, fv),
      ratioOf: '÷ first load --include vms',
      target: { op: '≤', value: HISTORY_TARGETS.nightVsFirstLoad },
    });
  }
  rows.push({ figure: 'Baseline: --replay, beside the as-of runs', unit: 'ms', stat: rb });
  rows.push({
    figure: `history as-of (night ${nightCount / 2} of ${nightCount + 1})`,
    unit: 'ms',
    stat: a,
    ratio: ratio(a, rb),
    ratioOf: '÷ --replay',
    target: { op: '≤', value: HISTORY_TARGETS.asOfVsReplay },
  });
  notes.push(
    `history: ${changed} of ${total} records changed each night (${((changed / total) * 100).toFixed(2)}%); the ${nightCount}-night file is measured once.`,
  );
  if (ctx.reportNights === undefined) return { rows, notes };
  const reportDb = await reportDatabase(ctx, ctx.reportNights, { start, nights, firstDb, all });
  notes.push(
    nights.length >= ctx.reportNights
      ? `report: the ${ctx.reportNights}-night history database is the first ${ctx.reportNights} of the nights above, loaded into a copy of the first night's file.`
      : `report: the ${ctx.reportNights}-night history database is the ${nights.length}-night file above with ${ctx.reportNights - nights.length} more nights ` +
          `(${HISTORY_CHANGED_SHARE * 100} % changes each, made on from the last by bench/history-night.mjs) loaded into a copy of it; the replay the pages are made of is its first night.`,
  );
  return { rows, notes, reportDb };
}

/**
 * A database of `count` nights: the first `count` of `made.nights` loaded into
 * a copy of the first night's file, or, when they are fewer, the file of them
 * all (`made.all`) copied and the missing nights made on from the last, loaded
 * and removed.
 */
async function reportDatabase(
  ctx: HistoryBenchContext,
  count: number,
  made: { start: Date; nights: readonly string[]; firstDb: string; all: string },
): Promise<string> {
  const { bin, workDir, run } = ctx;
  if (!Number.isInteger(count) || count < 2)
    throw new Error(`report history nights: a whole number of at least 2, not ${count}`);
  const db = join(workDir, `history-report-${count}.sqlite`);
  if (made.nights.length >= count) {
    copyDb(made.firstDb, db);
    await run([bin, 'history', 'load', ...made.nights.slice(1, count), `--history=${db}`, '--quiet'], { workDir });
    return db;
  }
  copyDb(made.all, db);
  const more: string[] = [];
  let last = made.nights[made.nights.length - 1]!;
  for (let n = made.nights.length; n < count; n++) {
    const day = addDays(made.start, n);
    const dir = join(workDir, `history-report-night-${n}`);
    await run(
      [
        join(ctx.benchDir, 'history-night.mjs'),
        last,
        dir,
        String(HISTORY_CHANGED_SHARE),
        day.toISOString(),
        formatISO(day, { representation: 'date' }),
      ],
      { workDir },
    );
    more.push((last = dir));
  }
  await run([bin, 'history', 'load', ...more, `--history=${db}`, '--quiet'], { workDir });
  for (const dir of more) rmSync(dir, { recursive: true, force: true });
  ctx.log(`history: ${count}-night database for the report made`);
  return db;
}
