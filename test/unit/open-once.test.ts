/**
 * Each export file is opened at most once per command (src/snapshot/dir.ts
 * owns a snapshot directory): `report --previous`, `history load`,
 * `findings` and `convert`, run in-process over two nights of the recording
 * with every kind of file (--include vms, --findings, --format csv,xlsx),
 * every file open of the process counted by wrapping node:fs/promises' open,
 * which every reader of a snapshot's files goes through (withFileInside).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runConvert } from '../../src/commands/convert.js';
import { runFindings } from '../../src/commands/findings.js';
import { runHistory } from '../../src/commands/history.js';
import { runReport } from '../../src/commands/report.js';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { runNotify } from '../../src/commands/notify.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';

const opened = vi.hoisted(() => [] as string[]);

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof fs.open = (path, ...rest) => {
    opened.push(String(path));
    return fs.open(path, ...rest);
  };
  return { ...fs, open, default: { ...fs, open } };
});

const REFUSED = { notify: ['https://127.0.0.1:9/hook'], notifyTimeout: '1' };
const NIGHTS = ['platform-3.14.1', 'platform-3.14.1-night2'].map((n) => join(REPO_ROOT, 'recordings', n));

/** How many times each export file of `dirs` was opened while `run` ran. */
async function opensOf(dirs: readonly string[], run: () => Promise<unknown>): Promise<Map<string, number>> {
  opened.length = 0;
  await run();
  const counts = new Map<string, number>();
  for (const dir of dirs)
    for (const f of readdirSync(dir).filter((n) => /^\d+-.*\.json$/.test(n))) counts.set(join(dir, f), 0);
  for (const path of opened) if (counts.has(path)) counts.set(path, counts.get(path)! + 1);
  return counts;
}

describe('each export file is opened at most once per command', () => {
  const cwd = tmpDir();
  const dirs = NIGHTS.map((_, i) => join(cwd, `svc-snapshot-night${i}`));

  beforeAll(async () => {
    for (const [i, replay] of NIGHTS.entries()) {
      const flags = { replay, outDir: dirs[i]!, include: 'vms', findings: true, format: 'csv,xlsx' };
      expect((await runSnapshot(flags, captureDeps(cwd).deps)).exitCode).toBe(0);
    }
  });

  const cases: Array<[string, () => Promise<unknown>, () => readonly string[]]> = [
    [
      'report --previous',
      () => runReport({ previous: dirs[0]!, out: join(cwd, 'page.html') }, [dirs[1]!], captureDeps(cwd).deps),
      () => dirs,
    ],
    [
      'history load',
      () => runHistory({ history: join(cwd, 'history.sqlite') }, ['load', ...dirs], captureDeps(cwd).deps),
      () => dirs,
    ],
    ['findings', () => runFindings({}, [dirs[1]!], captureDeps(cwd).deps), () => [dirs[1]!]],
    // A target that refuses the connection: the digest is made (every file read for it) and its sending fails.
    ['notify', () => runNotify({ ...REFUSED }, [dirs[1]!], captureDeps(cwd).deps), () => dirs],
    [
      'notify --previous',
      () => runNotify({ ...REFUSED, previous: dirs[0]! }, [dirs[1]!], captureDeps(cwd).deps),
      () => dirs,
    ],
    [
      'convert',
      () => runConvert({ format: 'csv,xlsx', outDir: join(cwd, 'converted') }, [dirs[1]!], captureDeps(cwd).deps),
      () => [dirs[1]!],
    ],
  ];
  for (const [name, run, read] of cases) {
    it(`${name}: every export file of the snapshots it reads opened once`, async () => {
      const counts = await opensOf(read(), run);
      expect(counts.size).toBeGreaterThanOrEqual(18 * read().length);
      // Every file is read (the report's, the findings' and the history's checks cover the files they do not use), none twice.
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    });
  }

  describe('beside nights written without --findings', () => {
    const plain = NIGHTS.map((_, i) => join(cwd, 'plain', `svc-snapshot-night${i}`));
    beforeAll(async () => {
      for (const [i, replay] of NIGHTS.entries()) {
        const flags = { replay, outDir: plain[i]!, include: 'vms' };
        expect((await runSnapshot(flags, captureDeps(cwd).deps)).exitCode).toBe(0);
      }
    });
    const runs: Array<[string, () => Promise<unknown>]> = [
      [
        'report --previous',
        () => runReport({ previous: plain[0]!, out: join(cwd, 'plain.html') }, [plain[1]!], captureDeps(cwd).deps),
      ],
      [
        'report (the night before found beside)',
        () => runReport({ out: join(cwd, 'plain2.html') }, [plain[1]!], captureDeps(cwd).deps),
      ],
    ];
    it('--format html on a snapshot: the night before found beside, its findings made as the comparison reads it, each file opened once', async () => {
      const out = join(cwd, 'plain', 'svc-snapshot-html');
      let result: unknown;
      const flags = { replay: NIGHTS[1]!, outDir: out, include: 'vms', format: 'html', findings: true };
      const counts = await opensOf([plain[0]!], async () => (result = await runSnapshot(flags, captureDeps(cwd).deps)));
      expect(result).toMatchObject({ exitCode: 0 });
      expect(counts.size).toBeGreaterThanOrEqual(18);
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
      // The states came from that night: its findings were made.
      const file = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as { previous?: unknown };
      expect(file.previous).toBeDefined();
    });
    it('--findings --format html --notify on a snapshot: the night before read once for the page, the findings and the digest', async () => {
      const out = join(cwd, 'plain', 'svc-snapshot-notify');
      let result: unknown;
      const flags = { ...REFUSED, replay: NIGHTS[1]!, outDir: out, include: 'vms', format: 'html', findings: true };
      const counts = await opensOf([plain[0]!], async () => (result = await runSnapshot(flags, captureDeps(cwd).deps)));
      expect(result).toMatchObject({ exitCode: 0 });
      expect(counts.size).toBeGreaterThanOrEqual(18);
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    });
    it('--findings --diff-previous on a snapshot: the night before compared once and its findings made from that reading', async () => {
      const out = join(cwd, 'plain', 'svc-snapshot-diff');
      const io = captureDeps(cwd);
      let result: unknown;
      const flags = { replay: NIGHTS[1]!, outDir: out, include: 'vms', findings: true, diffPrevious: true, json: true };
      const counts = await opensOf([plain[0]!], async () => (result = await runSnapshot(flags, io.deps)));
      expect(result).toMatchObject({ exitCode: 0 });
      expect(counts.size).toBeGreaterThanOrEqual(18);
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
      const file = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as { previous?: unknown };
      expect(file.previous).toBeDefined();
      const summary = JSON.parse(io.out()) as { diffPrevious?: { previous: string | null; exports?: unknown[] } };
      expect(summary.diffPrevious?.previous).toBe(plain[0]);
      expect(summary.diffPrevious?.exports?.length).toBeGreaterThan(0);
    });
    for (const [name, run] of runs) {
      it(`${name}: the night before's findings made from the files as the comparison reads them, each opened once`, async () => {
        let result: unknown;
        const counts = await opensOf(plain, async () => (result = await run()));
        expect(result).toMatchObject({ exitCode: 0 });
        expect(counts.size).toBeGreaterThanOrEqual(18 * plain.length);
        expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
      });
    }
  });
});
