/**
 * --build-threads and SVC_BUILD_THREADS built the exports on worker threads;
 * they no longer do anything, but a job that still sets them keeps running,
 * told once that it may drop them, and writes the same files.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const WARNING = /no longer does anything: the exports are built on the main thread; drop it/g;

function files(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .filter((f) => /\.(json|csv)$/.test(f) && !f.startsWith('_'))
      .map((f) => [f, readFileSync(join(dir, f))]),
  );
}

describe('--build-threads and SVC_BUILD_THREADS, retired', () => {
  it('are accepted with one warning each run, and change no file; help no longer shows them', async () => {
    const dir = tmpDir();
    const plain = await runCli(['--replay', RECORDING, '--out-dir', join(dir, 'plain'), '--format', 'csv']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(WARNING);
    const flag = await runCli([
      '--replay',
      RECORDING,
      '--out-dir',
      join(dir, 'flag'),
      '--format',
      'csv',
      '--build-threads',
      '2',
    ]);
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stderr.match(WARNING)).toHaveLength(1);
    expect(flag.stderr).toContain('--build-threads no longer does anything');
    const env = await runCli(['--replay', RECORDING, '--out-dir', join(dir, 'env'), '--format', 'csv'], {
      env: { SVC_BUILD_THREADS: '1' },
    });
    expect(env.code, env.stderr).toBe(0);
    expect(env.stderr.match(WARNING)).toHaveLength(1);
    expect(env.stderr).toContain('SVC_BUILD_THREADS no longer does anything');
    const expected = files(join(dir, 'plain'));
    expect(expected.size).toBe(30);
    for (const other of ['flag', 'env']) {
      const got = files(join(dir, other));
      expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [f, bytes] of expected) expect(got.get(f)!.equals(bytes), `${other}: ${f}`).toBe(true);
    }
    const help = await runCli(['snapshot', '--help']);
    expect(help.stdout).not.toMatch(/build-threads|BUILD_THREADS/);
  });
});
