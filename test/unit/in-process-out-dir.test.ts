import { describe, expect, it, vi } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runConvert } from '../../src/commands/convert.js';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { UsageError } from '../../src/errors.js';
import { inProcess } from '../helpers/in-process.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { writeSnapshot } from '../helpers/snapshot-dir.js';

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

describe('convert refuses an --out-dir that is not a directory of its own', () => {
  const unsafe: [string, (cwd: string) => string][] = [
    ['"."', () => '.'],
    ['".."', () => '..'],
    ['"/"', () => '/'],
    ['the working directory, absolute', (cwd) => cwd],
    ['the working directory with a trailing slash', (cwd) => `${cwd}/`],
    ['the home directory', (cwd) => join(cwd, 'home')],
  ];
  it.each(unsafe)('%s: a usage error (exit 2), nothing written', async (_name, outDir) => {
    const cwd = workdir();
    const snap = writeSnapshot(join(tmpDir(), 'snap'));
    vi.stubEnv('HOME', join(cwd, 'home'));
    const run = inProcess([], { cwd });
    const err = await runConvert({ format: 'csv', outDir: outDir(cwd) }, [snap], run.deps)
      .then(
        () => undefined,
        (e: unknown) => e,
      )
      .finally(() => vi.unstubAllEnvs());
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/--out-dir .* is the (root|working|home) directory|a parent of the working/);
    expect(exitCodeOf(err as UsageError)).toBe(2);
    expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
    expect(readdirSync(join(cwd, 'home'))).toEqual([]);
    expect(run.stdout()).toBe('');
  });
});
