import { copyFileSync, mkdirSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
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

  it('a lib/ built without the build worker says what is missing and publishes nothing (exit 1); --build-threads 0 still works', async () => {
    const repo = halfBuilt('build-worker.js');
    const bin = join(repo, 'bin', 'svc-snapshot.js');
    const out = join(repo, 'snap');
    const r = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', out, '--build-threads', '2'], { bin });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/lib\/build-worker\.js is missing: run npm run build, or pass --build-threads 0; nothing was published/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(repo).sort()).toEqual(['bin', 'lib', 'node_modules', 'package.json']);
    const main = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', out, '--build-threads', '0', '--quiet'], { bin });
    expect(main.code).toBe(0);
  });

  it('a lib/ built without the spreadsheet worker says so before anything is read when workers would write spreadsheets (exit 1)', async () => {
    const repo = halfBuilt('sheet-worker.js');
    const bin = join(repo, 'bin', 'svc-snapshot.js');
    const out = join(repo, 'snap');
    const r = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', out, '--build-threads', '1', '--format', 'csv'], { bin });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/lib\/sheet-worker\.js is missing: run npm run build, or pass --build-threads 0; nothing was published/);
    expect(r.stderr).not.toMatch(/replaying/);
    expect(readdirSync(repo).sort()).toEqual(['bin', 'lib', 'node_modules', 'package.json']);
    // Without spreadsheets the workers are not needed.
    const json = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', out, '--build-threads', '1', '--quiet'], { bin });
    expect(json.code).toBe(0);
    // By default (no --build-threads) the spreadsheets' worker is not asked for: without its file, the main thread makes them, the same files.
    const alone = await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', join(repo, 'alone'), '--format', 'csv,xlsx', '--quiet'], { bin });
    expect(alone.code, alone.stderr).toBe(0);
    const full = join(tmpDir(), 'full');
    expect((await runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', full, '--format', 'csv,xlsx', '--quiet'])).code).toBe(0);
    const sheets = (dir: string) => readdirSync(dir).filter((f) => /\.(csv|xlsx)$/.test(f)).sort();
    expect(sheets(join(repo, 'alone'))).toHaveLength(16);
    expect(sheets(join(repo, 'alone'))).toEqual(sheets(full));
    for (const f of sheets(full)) expect(readFileSync(join(repo, 'alone', f)).equals(readFileSync(join(full, f))), f).toBe(true);
    // convert too: the main thread alone without the worker's file, the files the full build's worker and main thread write.
    const converted = await runCli(['convert', full, '--out-dir', join(repo, 'converted'), '--quiet'], { bin });
    expect(converted.code, converted.stderr).toBe(0);
    expect(sheets(join(repo, 'converted'))).toEqual(sheets(full));
    for (const f of sheets(full)) expect(readFileSync(join(repo, 'converted', f)).equals(readFileSync(join(full, f))), f).toBe(true);
  });
});
