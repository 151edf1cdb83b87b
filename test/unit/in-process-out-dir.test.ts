import { describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { UsageError } from '../../src/errors.js';
import { inProcess } from '../helpers/in-process.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';

/**
 * --out-dir cannot eat a working directory: the cases that differ only in
 * how the path is spelled, run in-process. The binary keeps the working
 * directory itself and the home directory (test/e2e/trust.test.ts, section 3).
 */

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

function workdir(): string {
  const cwd = tmpDir();
  writeFileSync(join(cwd, 'precious.txt'), 'do not delete');
  mkdirSync(join(cwd, 'home'));
  return cwd;
}

describe('snapshot --replay refuses an --out-dir that is not a directory of its own', () => {
  const unsafe: [string, (cwd: string) => string][] = [
    ['"" (an unset variable in a cron line)', () => ''],
    ['"  "', () => '  '],
    ['".."', () => '..'],
    ['"/"', () => '/'],
    ['the working directory, absolute', (cwd) => cwd],
    ['the working directory with a trailing slash', (cwd) => `${cwd}/`],
  ];
  it.each(unsafe)('%s: a usage error (exit 2), nothing deleted', async (_name, outDir) => {
    const cwd = workdir();
    const run = inProcess([], { cwd });
    const err = await runSnapshot({ replay: RECORDING, outDir: outDir(cwd) }, run.deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/--out-dir/);
    expect(exitCodeOf(err as UsageError)).toBe(2);
    expect(readFileSync(join(cwd, 'precious.txt'), 'utf8')).toBe('do not delete');
    expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
    expect(run.stdout()).toBe('');
  });
});
