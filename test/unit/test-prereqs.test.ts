import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, reachableTmpDir } from '../helpers/run-cli.js';

// scripts/test-prereqs.mjs: the first step of npm test.
const SCRIPT = join(REPO_ROOT, 'scripts', 'test-prereqs.mjs');
const asRoot = process.getuid?.() === 0;

function prereqs(env: Record<string, string>, asNobody = false) {
  let script = SCRIPT;
  if (asNobody) {
    // A copy the other user can read wherever the clone is (the script imports nothing of it), out of a private TMPDIR.
    const dir = reachableTmpDir('svc-prereqs-');
    chmodSync(dir, 0o755);
    script = join(dir, 'test-prereqs.mjs');
    copyFileSync(SCRIPT, script);
    chmodSync(script, 0o644);
  }
  const cmd = asNobody
    ? ['/usr/bin/setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', process.execPath, script]
    : [process.execPath, script];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: 'utf8', env, cwd: '/' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the test prerequisites check', () => {
  it('says nothing and passes when everything the tests use is installed', () => {
    expect(prereqs({ PATH: process.env.PATH ?? '' })).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('stops with one line naming what is missing and the packages to install when apt-get cannot be used', () => {
    // No PATH: openssl, ssh-keygen and age are not found, and neither is apt-get.
    const r = prereqs({ PATH: '/nonexistent' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^npm test needs openssl, ssh-keygen, age and age-keygen, which are not installed \(.+\): as root, run apt-get update && apt-get install -y --no-install-recommends openssl openssh-client age\n$/,
    );
  });

  it.skipIf(!asRoot || !existsSync('/usr/bin/setpriv'))('stops without trying apt-get when not run by root', () => {
    const r = prereqs({ PATH: '/nonexistent' }, true);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^npm test needs openssl, ssh-keygen, age and age-keygen, which are not installed \(only root can install them\): /,
    );
  });
});
