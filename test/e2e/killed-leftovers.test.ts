import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPid, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { leftovers } from '../helpers/assert-output.js';

// What a run killed with SIGKILL (the OOM killer, systemd after
// TimeoutStopSec) leaves where no signal handler could remove it, beyond the
// staging directories of test/e2e/publish-stale.test.ts: the next run of the
// same kind removes it and says so, and leaves a running process's alone.
let dead: number;
/** A process that is certainly running while the tests run: its pid names a concurrent run's leftovers. */
let sleeping: ChildProcess;
let complete: string;

beforeAll(async () => {
  dead = await deadPid();
  sleeping = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600_000)'], { stdio: 'ignore' });
  complete = join(tmpDir(), 'complete');
  expect((await replay(complete, ['--quiet'])).code).toBe(0);
}, 300_000);

afterAll(() => {
  sleeping.kill();
});

function replay(dir: string, extra: string[] = []) {
  return runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', dir, ...extra]);
}

describe('--keep', () => {
  it('removes an older snapshot a killed prune had moved aside, not a running prune’s', async () => {
    const parent = tmpDir();
    const killed = `.svc-snapshot-2026-11-19.pruning-${dead}-0a1b2c3d`;
    const running = `.svc-snapshot-2026-11-18.pruning-${sleeping.pid}-4e5f6a7b`;
    // Killed half way through removing it: the manifest goes first.
    cpSync(complete, join(parent, killed), { recursive: true });
    rmSync(join(parent, killed, '_snapshot-manifest.json'));
    cpSync(complete, join(parent, running), { recursive: true });

    const res = await replay(join(parent, 'svc-snapshot-2026-11-21'), ['--keep', '3']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `svc-snapshot: warning: --keep: removed ${killed}, left by a --keep run that was killed`,
    );
    expect(res.stderr).not.toContain(running);
    expect(leftovers(parent)).toEqual([running]);
    expect(readdirSync(join(parent, running))).toContain('_snapshot-manifest.json');
    expect(existsSync(join(parent, 'svc-snapshot-2026-11-21', '_snapshot-manifest.json'))).toBe(true);
  });
});

/** A temporary file as a killed convert or report leaves it: half written, 0600. */
function temp(dir: string, name: string, pid: number, hex = '0a1b2c3d'): string {
  const file = `.${name}.partial-${pid}-${hex}`;
  writeFileSync(join(dir, file), 'PK\u0003\u0004 half a workbook', { mode: 0o600 });
  return file;
}

const WORKBOOK = 'svc-snapshot-2026-11-21.xlsx';
const CSV = '12-users (11-21-2026).csv';
const LEFT = 'by a convert or report that was killed';

describe('convert', () => {
  it('removes a killed convert’s temporary files from the snapshot, which verify named, not a running one’s', async () => {
    const dir = join(tmpDir(), 'snap');
    cpSync(complete, dir, { recursive: true });
    const killed = [temp(dir, WORKBOOK, dead), temp(dir, CSV, dead, 'ffffffff')];
    const before = await runCli(['verify', dir]);
    expect(before.code).toBe(1);
    for (const f of killed) expect(before.stdout).toContain(`FAILED: ${f}: unexpected (a temporary file of a convert`);

    const running = temp(dir, CSV, sleeping.pid!);
    const res = await runCli(['convert', dir, '--format', 'csv,xlsx']);
    expect(res.code, res.stderr).toBe(0);
    for (const f of killed) expect(res.stderr).toContain(`svc-snapshot: warning: removed ${f}, left in ${dir} ${LEFT}`);
    expect(res.stderr).not.toContain(running);
    expect(leftovers(dir)).toEqual([running]);
    expect(existsSync(join(dir, WORKBOOK))).toBe(true);

    rmSync(join(dir, running));
    expect((await runCli(['verify', dir])).code).toBe(0);
  });

  it('removes them from an --out-dir too, and leaves alone what only looks like them', async () => {
    const out = join(tmpDir(), 'sheets');
    mkdirSync(out, { mode: 0o700 });
    const killed = temp(out, WORKBOOK, dead);
    // A wrong tail, a directory and a link of the exact name: not a file convert wrote.
    const alike = [
      temp(out, CSV, dead, 'NOTHEX00'),
      `.${CSV}.partial-${dead}-0a1b2c3d`,
      `.b.csv.partial-${dead}-0a1b2c3d`,
    ];
    mkdirSync(join(out, alike[1]!));
    const elsewhere = join(tmpDir(), 'notes.txt');
    writeFileSync(elsewhere, 'not to be followed');
    symlinkSync(elsewhere, join(out, alike[2]!));
    const res = await runCli(['convert', complete, '--format', 'xlsx', '--out-dir', out]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: removed ${killed}, left in ${out} ${LEFT}`);
    expect(res.stderr.match(/warning: removed/g)).toHaveLength(1);
    expect(leftovers(out).sort()).toEqual(alike.sort());
    expect(readFileSync(elsewhere, 'utf8')).toBe('not to be followed');
  });
});

describe('convert and publishing', () => {
  it('remove only the names they write, in an --out-dir and in the snapshot', async () => {
    const out = join(tmpDir(), 'co');
    mkdirSync(out, { mode: 0o700 });
    const budget = temp(out, 'budget.ods', dead, 'cafebabe');
    const killed = temp(out, CSV, dead);
    const res = await runCli(['convert', complete, '--format', 'csv', '--out-dir', out]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: removed ${killed}, left in ${out} ${LEFT}`);
    expect(res.stderr).not.toContain(budget);
    expect(leftovers(out)).toEqual([budget]);

    const dir = join(tmpDir(), 'svc-snapshot-2026-11-21');
    cpSync(complete, dir, { recursive: true });
    const notes = temp(dir, 'notes.txt', dead);
    const inPlace = await runCli(['convert', dir, '--format', 'xlsx']);
    expect(inPlace.code, inPlace.stderr).toBe(0);
    expect(inPlace.stderr).not.toContain(notes);
    expect(leftovers(dir)).toEqual([notes]);
    // Not a file the tool writes there: the directory is not replaced, and the file stays.
    const again = await replay(dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`refusing to replace ${dir}: it holds ${notes}`);
    expect(again.stderr).not.toContain(`removed ${notes}`);
    expect(leftovers(dir)).toEqual([notes]);
  });
});

describe('report', () => {
  it('removes a killed report’s temporary page, and no other name’s', async () => {
    const dir = join(tmpDir(), 'snap');
    cpSync(complete, dir, { recursive: true });
    const killed = temp(dir, 'svc-snapshot-2026-11-21.html', dead);
    const other = temp(dir, WORKBOOK, dead);
    const res = await runCli(['report', dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: removed ${killed}, left in ${dir} ${LEFT}`);
    expect(leftovers(dir)).toEqual([other]);
  });
});

describe('publishing again', () => {
  it('replaces a snapshot a killed convert left a temporary file in, instead of refusing it', async () => {
    const dir = join(tmpDir(), 'svc-snapshot-2026-11-21');
    cpSync(complete, dir, { recursive: true });
    const killed = temp(dir, WORKBOOK, dead);
    const res = await replay(dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: removed ${killed}, left in ${dir} ${LEFT}`);
    expect(leftovers(dir)).toEqual([]);
  });

  it('leaves a running convert’s temporary file, and so refuses to replace the snapshot', async () => {
    const dir = join(tmpDir(), 'svc-snapshot-2026-11-21');
    cpSync(complete, dir, { recursive: true });
    const running = temp(dir, WORKBOOK, sleeping.pid!);
    const res = await replay(dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`refusing to replace ${dir}: it holds ${running}`);
    expect(leftovers(dir)).toEqual([running]);
  });

  it('--keep deletes an older snapshot once a killed convert’s temporary file in it is removed', async () => {
    const parent = tmpDir();
    const older = join(parent, 'svc-snapshot-2026-11-20');
    cpSync(complete, older, { recursive: true });
    const killed = temp(older, WORKBOOK, dead);
    const res = await replay(join(parent, 'svc-snapshot-2026-11-21'), ['--keep', '1']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: --keep: removed ${killed}, left in ${older} ${LEFT}`);
    expect(res.stderr).toContain(`--keep: deleted ${older}`);
    expect(existsSync(older)).toBe(false);
  });

  // Copies of one snapshot: their manifests all say 2026-11-21, whatever their directories' names.
  const PAGE = 'svc-snapshot-2026-11-21.html';
  it('--keep touches nothing in a directory it leaves as not ours, nor a name convert and report never write', async () => {
    const parent = tmpDir();
    const ours = join(parent, 'svc-snapshot-2026-11-20');
    cpSync(complete, ours, { recursive: true });
    const page = temp(ours, PAGE, dead);
    const foreign = join(parent, 'svc-snapshot-2026-11-19');
    cpSync(complete, foreign, { recursive: true });
    const notes = [temp(foreign, PAGE, dead), temp(foreign, 'notes.txt', dead)];
    const notOurs = join(parent, 'svc-snapshot-2026-11-05');
    mkdirSync(notOurs);
    writeFileSync(join(notOurs, 'notes.txt'), 'mine');
    const draft = temp(notOurs, 'notes.txt', dead, '0badf00d');
    const res = await replay(join(parent, 'svc-snapshot-2026-11-21'), ['--keep', '5']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`svc-snapshot: warning: --keep: removed ${page}, left in ${ours} ${LEFT}`);
    expect(res.stderr.match(/--keep: removed/g)).toHaveLength(1);
    expect(leftovers(ours)).toEqual([]);
    expect(res.stderr).toContain(`--keep: left ${foreign}: it holds ${notes[1]}, which its manifest does not list`);
    expect(leftovers(foreign).sort()).toEqual(notes.sort());
    expect(res.stderr).toContain(`--keep: left ${notOurs}: it has no _snapshot-manifest.json`);
    expect(leftovers(notOurs)).toEqual([draft]);
  });
});
