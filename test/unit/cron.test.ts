import { describe, expect, it } from 'vitest';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { datedName, pruneOlder, removeChecked } from '../../src/cron/keep.js';
import { parseKeep } from '../../src/config/values.js';
import { readLastSuccess, renderMetrics } from '../../src/cron/metrics.js';
import { pingUrl } from '../../src/cron/ping.js';
import { deadPid, tmpDir } from '../helpers/run-cli.js';

describe('datedName', () => {
  it('splits a name around its last calendar date', () => {
    expect(datedName('svc-snapshot-2026-11-21')).toEqual({ prefix: 'svc-snapshot-', date: '2026-11-21', suffix: '' });
    expect(datedName('site-2020-01-01-2026-11-21.d')).toEqual({
      prefix: 'site-2020-01-01-',
      date: '2026-11-21',
      suffix: '.d',
    });
    expect(datedName('2026-11-21')).toEqual({ prefix: '', date: '2026-11-21', suffix: '' });
  });

  it('finds no date where there is no real one', () => {
    expect(datedName('svc-snapshot-latest')).toBeUndefined();
    expect(datedName('svc-snapshot-2026-02-30')).toBeUndefined();
    expect(datedName('svc-snapshot-2026-13-01')).toBeUndefined();
  });
});

describe('parseKeep', () => {
  it('takes whole numbers from 1 and refuses the rest', () => {
    expect(parseKeep('1')).toBe(1);
    expect(parseKeep('14')).toBe(14);
    for (const bad of ['0', '-2', '2.5', 'x', '', ' ', '1e400', 'Infinity'])
      expect(() => parseKeep(bad), bad).toThrow(/--keep must be a whole number/);
  });
});

describe('removeChecked', () => {
  it('removes the directory checked, and leaves whole one that took its name since (a run republishing it)', () => {
    const parent = tmpDir();
    const dir = join(parent, 'svc-snapshot-2026-01-01');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.json'), 'old');
    const checked = { dir, checked: lstatSync(dir), files: ['a.json'], dirs: [''] };
    // Another run publishes the same name between the check and the removal.
    renameSync(dir, join(parent, 'elsewhere'));
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.json'), 'new');
    expect(() => removeChecked(checked)).toThrow(/replaced since it was checked/);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('new');
    expect(readdirSync(parent).sort()).toEqual(['elsewhere', 'svc-snapshot-2026-01-01']);
    // The one checked is removed, and nothing is left beside it.
    const again = { dir, checked: lstatSync(dir), files: ['a.json'], dirs: [''] };
    removeChecked(again);
    expect(readdirSync(parent)).toEqual(['elsewhere']);
  });
});

describe('pruneOlder', () => {
  it('never touches a dated directory whose manifest is not a complete one of this tool', () => {
    const parent = tmpDir();
    const manifests: Record<string, unknown> = {
      '2026-01-01': {
        kind: 'snapshot',
        tool: { name: 'other-tool', version: '1' },
        date: '2026-01-01',
        complete: true,
        exports: [],
      },
      '2026-01-02': {
        kind: 'snapshot',
        tool: { name: 'svc-snapshot', version: '1' },
        date: '2026-01-02',
        complete: false,
        exports: [],
      },
      '2026-01-03': {
        kind: 'snapshot',
        tool: { name: 'svc-snapshot', version: '1' },
        date: '2026-01-03',
        complete: true,
        exports: [{ file: '../escape.json' }],
      },
      '2026-01-04': { kind: 'collection', tool: { name: 'svc-snapshot', version: '1' }, routes: [] },
    };
    for (const [d, m] of Object.entries(manifests)) {
      mkdirSync(join(parent, `svc-snapshot-${d}`));
      writeFileSync(join(parent, `svc-snapshot-${d}`, '_snapshot-manifest.json'), JSON.stringify(m));
    }
    mkdirSync(join(parent, 'svc-snapshot-2026-01-05'));
    writeFileSync(join(parent, 'svc-snapshot-2026-01-05', '_snapshot-manifest.json'), '{not json');
    mkdirSync(join(parent, 'svc-snapshot-2026-02-01'));
    const result = pruneOlder(join(parent, 'svc-snapshot-2026-02-01'), 'snapshot', 1);
    expect(result.pruned).toEqual([]);
    expect(result.left.map((l) => l.dir.slice(-10)).sort()).toEqual([
      '2026-01-01',
      '2026-01-02',
      '2026-01-03',
      '2026-01-04',
      '2026-01-05',
    ]);
    expect(result.left.find((l) => l.dir.endsWith('01-02'))!.reason).toMatch(/partial snapshot/);
  });

  it('removes what a killed prune moved aside for a name of its kind, and nothing that only looks like it', async () => {
    const parent = tmpDir();
    const dead = await deadPid();
    const aside = (name: string, pid: number, hex = '0a1b2c3d') => {
      const dir = join(parent, `.${name}.pruning-${pid}-${hex}`);
      mkdirSync(join(dir, 'raw'), { recursive: true });
      writeFileSync(join(dir, 'raw', 'users.json'), '[]');
      return basename(dir);
    };
    const killed = aside('svc-snapshot-2026-01-01', dead);
    const kept = [
      aside('svc-snapshot-2026-01-02', process.pid), // a prune running now
      aside('svc-snapshot-raw-2026-01-01', dead), // another kind's: its own prune recovers it
      aside('svc-snapshot-2026-01-03', dead, 'nothex00'),
      aside('other-tool', dead),
    ];
    symlinkSync(join(parent, kept[0]!), join(parent, `.svc-snapshot-2026-01-04.pruning-${dead}-0a1b2c3d`));
    kept.push(`.svc-snapshot-2026-01-04.pruning-${dead}-0a1b2c3d`);
    mkdirSync(join(parent, 'svc-snapshot-2026-02-01'));

    const result = pruneOlder(join(parent, 'svc-snapshot-2026-02-01'), 'snapshot', 1);
    expect(result.recovered).toEqual([`removed ${killed}, left by a --keep run that was killed`]);
    expect(readdirSync(parent).sort()).toEqual([...kept, 'svc-snapshot-2026-02-01'].sort());
    expect(readdirSync(join(parent, kept[0]!, 'raw'))).toEqual(['users.json']);
  });
});

describe('renderMetrics', () => {
  it('writes HELP and TYPE once per metric, escapes label values, and leaves out what the run did not learn', () => {
    const text = renderMetrics({
      command: 'snapshot',
      site: 'https://platform.example.org',
      exitCode: 1,
      endedAt: new Date(1_700_000_000_500),
      durationMs: 1234,
      lastSuccess: undefined,
      report: {
        records: [
          { export: 'a"b\\c\nd', count: 3 },
          { export: 'users', count: 2 },
        ],
      },
    });
    const site = 'site="https://platform.example.org"';
    expect(text).toContain(`svc_snapshot_last_run_timestamp_seconds{command="snapshot",${site}} 1700000000.5\n`);
    expect(text).toContain(`svc_snapshot_last_success_timestamp_seconds{command="snapshot",${site}} 0\n`);
    expect(text).toContain(`svc_snapshot_duration_seconds{command="snapshot",${site}} 1.234\n`);
    expect(text).toContain(`svc_snapshot_records{command="snapshot",${site},export="a\\"b\\\\c\\nd"} 3\n`);
    // Every sample carries the site.
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#')))
      expect(line).toContain(`,${site}`);
    expect(text.match(/# TYPE svc_snapshot_records gauge/g)).toHaveLength(1);
    expect(text).not.toContain('svc_snapshot_routes');
    expect(text).not.toContain('svc_snapshot_drift_fields');
  });
});

describe('readLastSuccess', () => {
  it('reads only a well-formed sample of the same command', () => {
    const dir = tmpDir();
    const file = join(dir, 'm.prom');
    writeFileSync(
      file,
      'svc_snapshot_last_success_timestamp_seconds{command="collect"} 1600000000\nsvc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1700000000.25\n',
    );
    expect(readLastSuccess(file, 'snapshot')).toBe(1700000000.25);
    expect(readLastSuccess(file, 'collect')).toBe(1600000000);
    expect(readLastSuccess(file, 'audit')).toBeUndefined();
    expect(readLastSuccess(join(dir, 'missing.prom'), 'snapshot')).toBeUndefined();
    writeFileSync(
      file,
      'svc_snapshot_last_success_timestamp_seconds{command="snapshot",command="x"} -5\nsvc_snapshot_last_success_timestamp_seconds{command="snapshot"} 99999999999999\n',
    );
    expect(readLastSuccess(file, 'snapshot')).toBeUndefined();
    // Another site's success is not this one's; a file without the site label (written before it) is this site's.
    writeFileSync(
      file,
      'svc_snapshot_last_success_timestamp_seconds{command="snapshot",site="https://a.example.org"} 1700000000\nsvc_snapshot_last_success_timestamp_seconds{command="snapshot",site="https://b.example.org"} 1700000100\n',
    );
    expect(readLastSuccess(file, 'snapshot', 'https://b.example.org')).toBe(1700000100);
    expect(readLastSuccess(file, 'snapshot', 'https://c.example.org')).toBeUndefined();
    writeFileSync(file, 'svc_snapshot_last_success_timestamp_seconds{command="snapshot"} 1700000000\n');
    expect(readLastSuccess(file, 'snapshot', 'https://c.example.org')).toBe(1700000000);
  });
});

describe('pingUrl', () => {
  it('appends the healthchecks paths', () => {
    expect(pingUrl('https://hc.example.org/ping/abc', 'start')).toBe('https://hc.example.org/ping/abc/start');
    expect(pingUrl('https://hc.example.org/ping/abc', 'success')).toBe('https://hc.example.org/ping/abc');
    expect(pingUrl('https://hc.example.org/ping/abc', 'fail')).toBe('https://hc.example.org/ping/abc/fail');
  });
});

describe('RunFacts', () => {
  it('counts routes as they end, lets the collection replace the count, adds the build, and counts a refused route as failed', async () => {
    const { RunFacts, countRoutes } = await import('../../src/cron/facts.js');
    const { silentReporter } = await import('../../src/progress/reporter.js');
    const facts = new RunFacts();
    const reporter = countRoutes(silentReporter, facts);
    expect(facts.report()).toEqual({ routes: { read: 0, skipped: 0, failed: 0 } });
    reporter.routeDone({ route: 'GET /api/users', status: 200 } as never);
    reporter.routeDone({ route: 'GET /api/vms', skipped: true, reason: '3.14.1' } as never);
    reporter.routeDone({ route: 'GET /api/drives', status: 500, error: 'HTTP 500' } as never);
    reporter.routeRefused?.('GET /api/teams');
    expect(facts.report()).toEqual({ routes: { read: 1, skipped: 1, failed: 2 } });
    facts.collection({
      manifest: {
        baseUrl: 'https://platform.example.org',
        routes: [
          { route: 'GET /api/users', status: 200 },
          { route: 'GET /api/drives', status: 200 },
        ] as never,
      },
    });
    expect(facts.site).toBe('https://platform.example.org');
    facts.build({
      exports: [{ export: 'users', count: 3 }],
      validation: { issues: 2 },
      drift: [{ unknownFields: ['a', 'b'] }],
    });
    expect(facts.report()).toEqual({
      routes: { read: 2, skipped: 0, failed: 0 },
      records: [{ export: 'users', count: 3 }],
      validationIssues: 2,
      driftFields: 2,
    });
  });
});
