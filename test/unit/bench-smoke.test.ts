import { availableParallelism, totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { met, renderResults, runBench, stat, type Row } from '../../bench/harness.js';
import { TARGETS } from '../../bench/workload.js';

const CRITICAL = 'Critical path: GET /api/realms + slowest route alone';

describe('the benchmark harness (npm run bench), on a tiny site', () => {
  it('measures every figure from real runs, forms each ratio from the rows it names, and checks live against replay by hash', async () => {
    const lines: string[] = [];
    const runs = 1;
    const r = await runBench({
      factor: 0.002,
      realmCount: 2,
      runs,
      latencyMs: 5,
      historyNights: 2,
      reportHistoryNights: 4,
      log: (l) => lines.push(l),
    });
    const rows = new Map(r.rows.map((row) => [row.figure, row]));
    expect(rows.size, 'figures are unique').toBe(r.rows.length);
    const get = (figure: string): Row & { stat: NonNullable<Row['stat']> } => {
      const row = rows.get(figure) ?? r.rows.find((x) => x.figure.startsWith(figure));
      expect(row, figure).toBeDefined();
      expect(row!.stat, figure).toBeDefined();
      return row as Row & { stat: NonNullable<Row['stat']> };
    };
    const [one, two] = r.sites;
    expect(r.sites).toHaveLength(2);

    // Every figure is samples of real runs: positive, finite, as many as asked for.
    for (const row of r.rows) {
      const s = row.stat!;
      expect(s, row.figure).toBeDefined();
      expect(s.samples.length, row.figure).toBeGreaterThan(0);
      for (const x of s.samples) expect(Number.isFinite(x) && x > 0, `${row.figure}: ${x}`).toBe(true);
      expect(s.min <= s.median && s.median <= s.max, row.figure).toBe(true);
    }
    for (const f of [
      'Live collect',
      'Live snapshot',
      'Live snapshot, --concurrency 1',
      '--replay of the collection',
      'CPU-bound work alone',
      'The same work, two processes at once',
      'svc-snapshot diff of the two snapshots',
      'svc-snapshot verify of the same snapshot',
      'history load, first night (SQLite)',
      'history load --include vms, first night (SQLite)',
      '--replay --format html beside the night before',
      '--replay --format html --history <db> with 4 nights',
      'Report page size, beside the night before',
    ]) {
      expect(get(f).stat.samples, f).toHaveLength(runs);
    }
    // Start-up is measured three times a round.
    expect(get('node -e 0').stat.samples).toHaveLength(3 * runs);
    expect(get('svc-snapshot --help').stat.samples).toHaveLength(3 * runs);
    // The durations are of child runs made one after the other inside this run: together they fit in its wall time.
    // (CPU times are not: client and server run at once, on every core.)
    const msTotal = r.rows
      .filter((row) => row.unit === 'ms' && !row.figure.startsWith('CPU time'))
      .reduce((n, row) => n + row.stat!.samples.reduce((a, b) => a + b, 0), 0);
    expect(msTotal).toBeLessThanOrEqual(r.wallSeconds * 1000);
    // Peak RSS is what a Node process reports for itself: more than an empty heap, less than the machine.
    const rss = r.rows.filter((row) => row.figure.startsWith('Peak RSS'));
    // Live and replay of both sites, the replay with spreadsheets, and --replay --raw without and with an archive.
    expect(rss).toHaveLength(7);
    for (const row of rss)
      for (const mb of row.stat!.samples)
        expect(mb > 10 && mb < totalmem() / 1e6, `${row.figure}: ${mb} MB`).toBe(true);
    // The collection sizes are the directories measured.
    expect(get(`Raw collection on disk (${one!.name})`).stat.median).toBe(one!.collectionBytes / 1e6);
    expect(get(`Raw collection on disk (${two!.name})`).stat.median).toBe(two!.collectionBytes / 1e6);
    expect(two!.collectionBytes).toBeGreaterThan(one!.collectionBytes);

    // Each ratio is formed from the medians of the rows it names.
    const checked = new Set<string>();
    const ratio = (figure: string, expected: number) => {
      const row = get(figure);
      expect(row.ratio, figure).toBeDefined();
      expect(row.ratio!, figure).toBeCloseTo(expected, 9);
      checked.add(row.figure);
    };
    const m = (figure: string) => get(figure).stat.median;
    ratio(
      'Transport floor: every route received and dropped',
      m('Transport floor: every route received and dropped') / m(CRITICAL),
    );
    ratio(
      'Transport floor, one request at a time',
      m('Transport floor, one request at a time') / m('Transport floor: every route received and dropped'),
    );
    ratio('Live collect', m('Live collect') / m('Transport floor: every route received and dropped'));
    ratio('Live snapshot', m('Live snapshot') / m('Transport floor: every route received and dropped'));
    ratio('Live snapshot, --concurrency 1', m('Live snapshot, --concurrency 1') / m('Live snapshot'));
    // CPU time of client and server: the floor's share of the machine, and the least wall time of a live run's work against the floor.
    const cores = availableParallelism();
    ratio(
      'CPU time of client and server, transport floor',
      m('CPU time of client and server, transport floor') /
        (cores * m('Transport floor: every route received and dropped')),
    );
    for (const what of ['live collect', 'live snapshot'])
      ratio(
        `CPU time of client and server, ${what}`,
        m(`CPU time of client and server, ${what}`) / cores / m('Transport floor: every route received and dropped'),
      );
    // Collecting does more than receiving and dropping: more CPU time than the floor.
    expect(m('CPU time of client and server, live collect')).toBeGreaterThan(
      m('CPU time of client and server, transport floor'),
    );
    ratio('--replay of the collection', m('--replay of the collection') / m('Baseline: read + JSON.parse'));
    ratio(
      'The same work, two processes at once',
      m('The same work, two processes at once') / m('CPU-bound work alone'),
    );
    ratio(
      '--replay --format csv,xlsx (time added over --replay)',
      (m('--replay --format csv,xlsx (time added over --replay)') - m('--replay of the collection')) /
        m('--replay of the collection'),
    );
    ratio(
      '--replay --findings (time added over --replay)',
      (m('--replay --findings (time added over --replay)') - m('--replay of the collection')) /
        m('--replay of the collection'),
    );
    ratio(
      '--replay --findings --notify to local receivers',
      (m('--replay --findings --notify to local receivers') - m('--replay --findings (time added over --replay)')) /
        m('--replay of the collection'),
    );
    ratio(
      '--replay --include vms (time added over --replay)',
      (m('--replay --include vms (time added over --replay)') - m('--replay of the collection')) /
        m('--replay of the collection'),
    );
    ratio(
      '--replay --format html beside the night before (time added over --replay)',
      (m('--replay --format html beside the night before') - m('--replay of the collection')) /
        m('--replay of the collection'),
    );
    // The report with a 4-night history: 2 nights after the first made by the history rows, 1 more made on from them.
    ratio(
      '--replay --format html --history <db> with 4 nights',
      (m('--replay --format html --history <db> with 4 nights') - m('--replay --history <db> of 4 nights')) /
        m('Baseline: --replay, beside the report runs with a history'),
    );
    for (const page of ['Report page size, beside the night before', 'Report page size, with 4 nights of history'])
      ratio(page, m(page) / TARGETS.reportPageMB);
    expect(r.notes.join('\n')).toContain('4-night history database is the 3-night file above with 1 more nights');
    ratio('svc-snapshot --help', m('svc-snapshot --help') / m('node -e 0'));
    ratio(
      '--findings beside the night before, with 1,000 waivers',
      (m('--findings beside the night before, with 1,000 waivers') -
        m('Baseline: --findings with no night before, in the same rounds')) /
        m('--replay of the collection'),
    );
    ratio(
      'findings <dir> --format csv, every finding',
      (m('findings <dir> --format csv, every finding') - m('Baseline: findings <dir> --json of that night')) /
        m('--replay of the collection'),
    );
    ratio(
      'svc-snapshot diff of the two snapshots',
      m('svc-snapshot diff of the two snapshots') / m('Baseline: JSON.parse of both snapshots'),
    );
    ratio(
      'svc-snapshot verify of the same snapshot',
      m('svc-snapshot verify of the same snapshot') / m("Baseline: sha256sum of the snapshot's"),
    );
    ratio(
      'history load, first night (SQLite)',
      m('history load, first night (SQLite)') / m('Baseline: --replay build of the first night'),
    );
    ratio('history load, a night with', m('history load, a night with') / m('history load, first night (SQLite)'));
    ratio(
      'history load --include vms, first night (SQLite)',
      m('history load --include vms, first night (SQLite)') /
        m('Baseline: --replay --include vms build of the first night'),
    );
    ratio(
      'history load --include vms, a night with',
      m('history load --include vms, a night with') / m('history load --include vms, first night (SQLite)'),
    );
    ratio(
      'history load, an unchanged night',
      m('history load, an unchanged night') / m('history load, first night (SQLite)'),
    );
    ratio(
      'SQLite file after 2 more nights',
      m('SQLite file after 2 more nights') / m('SQLite file after the first night'),
    );
    ratio(
      'history as-of (night 1 of 3)',
      m('history as-of (night 1 of 3)') / m('Baseline: --replay, beside the as-of runs'),
    );
    for (const site of [one!, two!]) {
      for (const what of ['live snapshot', 'replay']) {
        ratio(
          `Peak RSS, ${what} (${site.name})`,
          m(`Peak RSS, ${what} (${site.name})`) / m(`Raw collection on disk (${site.name})`),
        );
      }
    }
    ratio(
      `Peak RSS, replay --format csv,xlsx (${one!.name})`,
      m(`Peak RSS, replay --format csv,xlsx (${one!.name})`) / m(`Raw collection on disk (${one!.name})`),
    );
    // Archives (bench/archive.ts): what the archive adds, against a replay and in peak memory; the verifies.
    const sealed = '--replay --raw --encrypt-to (time added over --replay --raw)';
    const raw = 'Baseline: --replay --raw, beside the archive runs';
    ratio(sealed, (m(sealed) - m(raw)) / m(raw));
    ratio(
      'Peak RSS, --replay --raw --encrypt-to',
      m('Peak RSS, --replay --raw --encrypt-to') - m('Peak RSS, --replay --raw'),
    );
    ratio(
      'verify --identity of its archive',
      m('verify --identity of its archive') / m('Baseline: verify of the snapshot directory'),
    );
    ratio('verify --replay of the snapshot', m('verify --replay of the snapshot') / m(raw));
    // No ratio goes unchecked, and every target has one to judge.
    expect(
      r.rows
        .filter((row) => row.ratio !== undefined)
        .map((row) => row.figure)
        .sort(),
    ).toEqual([...checked].sort());
    for (const row of r.rows.filter((x) => x.target)) expect(met(row), row.figure).toBeTypeOf('boolean');

    // Live and replay were compared file by file: all 15 exports, every round.
    expect(r.hashChecks).toEqual(
      Array.from({ length: runs }, (_, i) => ({ round: i + 1, files: 15, identical: true })),
    );
    expect(r.notes.join('\n')).toContain('byte-identical in every round');

    const md = renderResults(r);
    expect(md).toContain('| figure | median | min | max | ratio | target | met |');
    for (const row of r.rows) expect(md, row.figure).toContain(`| ${row.figure} |`);
    expect(md).toContain(r.machine.node);
    expect(md).toContain(`≤ ${TARGETS.rssVsCollection}`);
  }, 900_000);

  it('takes medians and judges targets in both directions', () => {
    expect(stat([3, 1, 2])).toMatchObject({ median: 2, min: 1, max: 3 });
    expect(stat([4, 1, 2, 3])!.median).toBe(2.5);
    expect(stat([])).toBeUndefined();
    const s = stat([1])!;
    expect(met({ figure: 'a', unit: 'ms', stat: s, ratio: 1.2, target: { op: '≤', value: 1.3 } })).toBe(true);
    expect(met({ figure: 'a', unit: 'ms', stat: s, ratio: 4, target: { op: '≥', value: 5 } })).toBe(false);
    expect(met({ figure: 'a', unit: 'ms', stat: s })).toBeUndefined();
  });
});
