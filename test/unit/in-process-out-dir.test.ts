import { describe, expect, it, vi } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runConvert } from '../../src/commands/convert.js';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { runVerify } from '../../src/commands/verify.js';
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

describe('convert refuses an --out-dir that is another snapshot', () => {
  /** Each file of `dir` with its bytes. */
  const contents = (dir: string) =>
    Object.fromEntries(
      readdirSync(dir)
        .sort()
        .map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
    );

  it('a usage error (exit 2) naming what to do; the other snapshot keeps its files and still verifies', async () => {
    const cwd = tmpDir();
    const snap = writeSnapshot(join(cwd, 'snap'));
    // A snapshot of the same day with its spreadsheets: the workbook's name is the same as the one convert writes.
    const other = join(cwd, 'other');
    expect(
      (await runSnapshot({ replay: RECORDING, outDir: other, format: 'csv,xlsx' }, inProcess([], { cwd }).deps))
        .exitCode,
    ).toBe(0);
    const before = contents(other);
    const run = inProcess([], { cwd });
    const err = await runConvert({ format: 'csv,xlsx', outDir: other }, [snap], run.deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(
      /--out-dir ".*other" holds a _snapshot-manifest\.json: it is another snapshot/,
    );
    expect((err as Error).message).toMatch(/a directory of its own.*or leave --out-dir out to write into .*snap$/);
    expect(exitCodeOf(err as UsageError)).toBe(2);
    expect(run.stdout()).toBe('');
    expect(contents(other)).toEqual(before);
    expect((await runVerify({}, [other], inProcess([], { cwd }).deps)).exitCode).toBe(0);
  });

  it('takes the snapshot being converted, however --out-dir spells it', async () => {
    const cwd = tmpDir();
    const snap = writeSnapshot(join(cwd, 'snap'));
    symlinkSync(snap, join(cwd, 'link'));
    for (const outDir of [snap, join(cwd, 'link'), 'snap/.', './link']) {
      const run = inProcess([], { cwd });
      expect((await runConvert({ format: 'csv', outDir }, [snap], run.deps)).exitCode, outDir).toBe(0);
    }
    expect(readdirSync(snap).filter((f) => f.endsWith('.csv')).length).toBeGreaterThan(0);
  });
});
