import { copyFileSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, runCli, tmpDir } from '../helpers/run-cli.js';
import { NIGHTS, writeNight } from '../helpers/history-fixtures.js';
import { halfBuilt } from '../helpers/half-built.js';

describe('a clone where lib/ was never built', () => {
  it('says what to run instead of a stack trace (exit 1)', async () => {
    const repo = realpathSync(tmpDir('svc-unbuilt-'));
    mkdirSync(join(repo, 'bin'));
    copyFileSync(CLI_BIN, join(repo, 'bin', 'svc-snapshot.js'));
    const r = await runCli(['--version'], { bin: join(repo, 'bin', 'svc-snapshot.js') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`svc-snapshot: ${repo}/lib/ is not built; run npm install (or npm run build) in ${repo}/\n`);
    expect(r.stdout).toBe('');
  });

  it('a lib/ built without the history check worker: history load says what is missing and loads nothing (exit 1)', async () => {
    const repo = halfBuilt('history-check.js');
    const night = writeNight(join(repo, 'night'), NIGHTS[0]!);
    const r = await runCli(['history', 'load', night, `--history=${join(repo, 'h.sqlite')}`], { bin: join(repo, 'bin', 'svc-snapshot.js') });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not run \(.*lib\/history-check\.js is missing: run npm run build\); the snapshot was not loaded/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const runs = await runCli(['history', 'runs', `--history=${join(repo, 'h.sqlite')}`, '--json'], { bin: join(repo, 'bin', 'svc-snapshot.js') });
    expect(JSON.parse(runs.stdout)).toMatchObject({ runs: [] });
  });
});
