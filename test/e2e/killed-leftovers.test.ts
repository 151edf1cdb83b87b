import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
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
