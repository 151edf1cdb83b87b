/**
 * What a newcomer reads first: `--help` of the program and of each command,
 * and the messages of the mistakes a first trial makes. Each runs the built
 * binary.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { getTestCerts } from '../fake/certs.js';

/** Help text with commander's line wrapping undone. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

describe('--help', () => {
  it('of the program is under 60 lines: each command on one line, and where to read more', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(60);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    for (const command of ['snapshot', 'collect', 'audit', 'check', 'diff', 'convert', 'findings', 'history'])
      expect(res.stdout).toMatch(new RegExp(`^  ${command} +\\S.*\\n  \\S`, 'm'));
    for (const command of ['report', 'notify', 'verify'])
      expect(res.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    expect(res.stdout).toContain('Without a command, svc-snapshot runs snapshot');
    expect(res.stdout).toContain('svc-snapshot <command> --help');
    expect(res.stdout).toContain('docs/');
  });

  it('of findings says what it does to the snapshot: it reads it, never publishes it', async () => {
    const res = await runCli(['findings', '--help']);
    expect(res.code).toBe(0);
    expect(flat(res.stdout)).not.toMatch(/published/);
    expect(flat(res.stdout)).toContain('the snapshot is read, never changed');
  });

  it('of convert offers only the formats convert writes, and --format json alone is refused as help says', async () => {
    const help = flat((await runCli(['convert', '--help'])).stdout);
    const line = /--format <list> ([^\n]*?)\(default ([^)]*)\)/.exec(help);
    expect(line, help).not.toBeNull();
    expect(line![1]).not.toMatch(/json \(always written\)|json,|json \|/);
    expect(line![1]).toMatch(/csv, xlsx/);
    expect(line![2]).toBe('csv,xlsx');
    const dir = tmpDir();
    const res = await runCli(['convert', dir, '--format', 'json']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/convert writes csv and xlsx \(json is the snapshot itself\)/);
  });

  it('of history says what --allow-partial does there (loading, not publishing)', async () => {
    const history = flat((await runCli(['history', '--help'])).stdout);
    expect(history).toMatch(/--allow-partial\s+history load: load partial snapshots too/);
    expect(history).not.toMatch(/publish even when routes failed/);
    const snapshot = flat((await runCli(['snapshot', '--help'])).stdout);
    expect(snapshot).toMatch(/--allow-partial\s+publish even when routes failed \(exit 4\)/);
  });

  it.each([
    ['snapshot', './svc-snapshot-<YYYY-MM-DD>'],
    ['collect', './svc-snapshot-raw-<YYYY-MM-DD>'],
    ['audit', './svc-snapshot-audit-<YYYY-MM-DD>'],
    ['convert', 'the snapshot directory itself'],
    ['history', './svc-snapshot-<date of that snapshot>'],
  ])('of %s shows the --out-dir default', async (command, shown) => {
    const help = flat((await runCli([command, '--help'])).stdout);
    expect(help).toMatch(
      new RegExp(`--out-dir <dir> [^\\n]*?\\(default ${shown.replace(/[.*+?^${}()|[\]\\<>]/g, '\\$&')}`),
    );
  });
});

describe("the audit help's --objects example", () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeServer(createAuditBackend().handlers, { tls: true });
  });
  afterAll(async () => {
    await server.close();
  });

  it('names types the audit service has (User, Team, Drive, Project), and runs as written', async () => {
    const help = (await runCli(['audit', '--help'])).stdout;
    const example = help.split('\n').find((l) => l.includes('$ ') && l.includes('--objects'));
    expect(example, help).toBeDefined();
    const values = [...example!.matchAll(/--objects (\S+)/g)].map((m) => m[1]!);
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(['User', 'Team', 'Drive', 'Project'], v).toContain(v.split(':')[0]);
    const out = join(tmpDir(), 'a');
    const res = await runCli(
      [
        'audit',
        '--audit-url',
        server.url,
        '--ca-file',
        getTestCerts().caFile,
        '--out-dir',
        out,
        '--quiet',
        ...values.flatMap((v) => ['--objects', v]),
      ],
      {
        env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
      },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(
      readdirSync(out)
        .filter((f) => f.startsWith('objects-'))
        .sort(),
    ).toEqual(values.map((v) => `objects-${v.split(':')[0]}-2037-12-31.json`).sort());
  });
});

describe('history --history <directory>', () => {
  it('says the directory was taken as the database and suggests --history=<target>, exit 2, creating nothing', async () => {
    const cwd = tmpDir();
    mkdirSync(join(cwd, 'svc-snapshot-2026-11-23'));
    mkdirSync(join(cwd, 'svc-snapshot-2026-11-24'));
    const res = await runCli(['history', 'load', '--history', 'svc-snapshot-2026-11-23', 'svc-snapshot-2026-11-24'], {
      cwd,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /--history "svc-snapshot-2026-11-23" is a directory, not a database: --history takes the argument after it as its target/,
    );
    expect(res.stderr).toMatch(/--history=<file>/);
    expect(res.stderr).not.toMatch(/ConnectionFailed|SQLITE|\n\s+at /);
    expect(readdirSync(cwd).sort()).toEqual(['svc-snapshot-2026-11-23', 'svc-snapshot-2026-11-24']);
    expect(readdirSync(join(cwd, 'svc-snapshot-2026-11-23'))).toEqual([]);
  });

  it('on a snapshot, publishes the snapshot first, then says the directory was taken as the database: exit 1, the advice, and how to load it later', async () => {
    const cwd = tmpDir();
    mkdirSync(join(cwd, 'taken'));
    const res = await runCli(
      [
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
        '--out-dir',
        'night',
        '--history',
        'taken',
        '--json',
      ],
      { cwd },
    );
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(
      /the snapshot was published to \S*night, but loading it into the history database failed: the history database "\S*taken" is a directory, not a database: --history takes the argument after it as its target/,
    );
    expect(res.stderr).toMatch(/--history=<file>.*Load it later with: svc-snapshot history load \S*night/s);
    expect(res.stderr).not.toMatch(/SQLITE|\n\s+at /);
    const summary = JSON.parse(res.stdout) as { history: { status: string; error: string } };
    expect(summary.history).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/is a directory, not a database/),
    });
    expect(readdirSync(cwd).sort()).toEqual(['night', 'taken']);
    expect(readdirSync(join(cwd, 'taken'))).toEqual([]);
    // The night is there, whole: it verifies, and loads once --history names a file.
    expect((await runCli(['verify', 'night', '--quiet'], { cwd })).code).toBe(0);
    const later = await runCli(['history', 'load', 'night', '--history=history.sqlite', '--quiet'], { cwd });
    expect(later.code, later.stderr).toBe(0);
  });
});

describe('standard output that cannot be written', () => {
  it('a full disk where it is redirected: said without a stack trace, exit 1', () => {
    const full = openSync('/dev/full', 'w');
    try {
      for (const args of [['--version'], ['diff', '--help']]) {
        const r = spawnSync(process.execPath, [CLI_BIN, ...args], {
          stdio: ['ignore', full, 'pipe'],
          encoding: 'utf8',
        });
        expect(r.status).toBe(1);
        expect(r.stderr).toMatch(/standard output could not be written \(ENOSPC: no space left on device\)/);
        expect(r.stderr).not.toMatch(/^\s+at /m);
      }
    } finally {
      closeSync(full);
    }
  });
});
