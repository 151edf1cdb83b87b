/**
 * --build-threads and SVC_BUILD_THREADS built the exports on worker threads;
 * after a release in which they did nothing, they are removed: a job that
 * still sets either is refused (exit 2) with the release that removed them
 * named, before anything is read or written, and CHANGELOG.md lists the
 * removal under that same release.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

/** The release a refusal names. */
function releaseIn(stderr: string, name: string): string {
  const m = new RegExp(`${name} was removed in svc-snapshot (\\d+\\.\\d+\\.\\d+) `).exec(stderr);
  expect(m, stderr).not.toBeNull();
  return m![1]!;
}

describe('--build-threads and SVC_BUILD_THREADS, removed', () => {
  it('are refused as a usage error naming the release that removed them, and nothing is written', async () => {
    const dir = tmpDir();
    const flag = await runCli(['--replay', RECORDING, '--out-dir', join(dir, 'flag'), '--build-threads', '2']);
    expect(flag.code, flag.stderr).toBe(2);
    const release = releaseIn(flag.stderr, '--build-threads');
    expect(flag.stderr).toContain('drop it');
    expect(existsSync(join(dir, 'flag'))).toBe(false);

    const env = await runCli(['--replay', RECORDING, '--out-dir', join(dir, 'env')], {
      env: { SVC_BUILD_THREADS: '1' },
    });
    expect(env.code, env.stderr).toBe(2);
    expect(releaseIn(env.stderr, 'SVC_BUILD_THREADS')).toBe(release);
    expect(env.stderr).toContain('unset it');
    expect(existsSync(join(dir, 'env'))).toBe(false);

    // An empty variable counts as unset, as for every option.
    const empty = await runCli(['--replay', RECORDING, '--out-dir', join(dir, 'empty'), '--quiet'], {
      env: { SVC_BUILD_THREADS: '' },
    });
    expect(empty.code, empty.stderr).toBe(0);

    const help = await runCli(['snapshot', '--help']);
    expect(help.stdout).not.toMatch(/build-threads|BUILD_THREADS/);

    // CHANGELOG.md says so under the same release.
    const changelog = readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8');
    const start = changelog.indexOf('## [Unreleased]');
    expect(start).toBeGreaterThanOrEqual(0);
    const next = changelog.indexOf('\n## ', start + 1);
    const section = changelog.slice(start, next < 0 ? undefined : next);
    expect(section).toContain(release);
    const removed = section.slice(section.indexOf('### Removed'));
    expect(section.indexOf('### Removed')).toBeGreaterThan(0);
    expect(removed).toContain('`--build-threads`');
    expect(removed).toContain('`SVC_BUILD_THREADS`');
  });
});
