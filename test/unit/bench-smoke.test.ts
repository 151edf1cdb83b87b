import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { met, renderResults, runBench, stat } from '../../bench/harness.js';
import { TARGETS } from '../../bench/workload.js';

describe('the benchmark harness (npm run bench), on a tiny site', () => {
  it('measures every figure once and renders the results table', async () => {
    const lines: string[] = [];
    const r = await runBench({ factor: 0.002, realmCount: 2, runs: 1, latencyMs: 5, log: (l) => lines.push(l) });
    const figures = r.rows.map((row) => row.figure);
    for (const f of ['Transport floor, one request at a time', 'Live collect', 'Live snapshot', 'Live snapshot, --concurrency 1', '--replay of the collection', 'svc-snapshot --help', 'node -e 0']) {
      expect(figures).toContain(f);
    }
    expect(figures).toContain('--replay --format csv,xlsx (time added over --replay)');
    expect(figures.filter((f) => f.startsWith('Peak RSS'))).toHaveLength(5);
    for (const row of r.rows) {
      expect(row.stat, row.figure).toBeDefined();
      expect(Number.isFinite(row.stat!.median) && row.stat!.median > 0, row.figure).toBe(true);
      if (row.target) expect(Number.isFinite(row.ratio), row.figure).toBe(true);
    }
    expect(r.sites).toHaveLength(2);
    expect(r.sites[1]!.collectionBytes).toBeGreaterThan(r.sites[0]!.collectionBytes);
    expect(r.notes.join('\n')).toContain('byte-identical in every round');
    const md = renderResults(r);
    expect(md).toContain('| figure | median | min | max | ratio | target | met |');
    expect(md).toContain(r.machine.node);
    expect(md).toContain(`≤ ${TARGETS.rssVsCollection}`);
    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    try {
      writeFileSync(join(dir, 'RESULTS.md'), md);
      expect(readFileSync(join(dir, 'RESULTS.md'), 'utf8')).toBe(md);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

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
