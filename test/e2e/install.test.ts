import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { installGlobal, npmEnv, pack } from '../helpers/install-packed.js';

// The README's install: `npm pack`, then `npm install -g` of the tarball (or
// of the clone), after which `svc-snapshot` runs from any directory. Into a
// temporary prefix, so nothing outside the test's directory changes
// (test/helpers/install-packed.ts: dependencies from npm's cache where it has them).
const run = promisify(execFile);
const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const PKG = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

/** `svc-snapshot` found on PATH, as a user types it, in `cwd`. */
function installed(prefix: string, args: string[], cwd: string) {
  return run('svc-snapshot', args, { cwd, env: npmEnv({ PATH: `${join(prefix, 'bin')}:${process.env.PATH}` }) }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: e.code ?? -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
}

describe('installed with npm install -g', () => {
  it('from the packed tarball: runs from any directory (--version, --help, a replay) with only what the package holds', async () => {
    expect(existsSync(join(REPO_ROOT, 'lib', 'main.js')), 'lib/ is built (npm run build)').toBe(true);
    const work = realpathSync(tmpDir('svc-install-'));
    // lib/ is built already: no prepare script needed to pack it.
    const { tarball, files } = await pack(work);
    // What bin/ runs and nothing of the development tree.
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'bin/svc-snapshot.js',
        'lib/main.js',
        'lib/ping-child.js',
        'README.md',
        'CHANGELOG.md',
        'docs/systemd/install.sh',
        'docs/systemd/svc-snapshot.service',
      ]),
    );
    // The README's screenshots are for the repository's page; the package does without them.
    expect(files.filter((f) => f.endsWith('.png'))).toEqual([]);
    expect(files.filter((f) => !/^(bin|lib|docs)\/|^(package\.json|README\.md|CHANGELOG\.md)$/.test(f))).toEqual([]);
    expect(files.filter((f) => /^(src|test|dist|bench|recordings|scripts|node_modules)\//.test(f))).toEqual([]);

    const prefix = join(work, 'prefix');
    await installGlobal(prefix, tarball, work);
    const elsewhere = join(work, 'elsewhere');
    await run('mkdir', [elsewhere]);

    const version = await installed(prefix, ['--version'], elsewhere);
    expect(version).toEqual({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
    const help = await installed(prefix, ['--help'], elsewhere);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc-snapshot/);
    expect(help.stdout).toMatch(/\bconvert\b/);

    // The replay's default output directory is in the working directory, outside the clone.
    const replay = await installed(prefix, ['--replay', RECORDING, '--quiet', '--format', 'csv,xlsx'], elsewhere);
    expect(replay.stderr).toBe('');
    expect(replay.code).toBe(0);
    const [outName] = readdirSync(elsewhere);
    expect(outName).toMatch(/^svc-snapshot-\d{4}-\d{2}-\d{2}$/);
    // The same files as the clone's own binary writes.
    const fromClone = join(work, 'from-clone');
    expect(
      (await runCli(['--replay', RECORDING, '--quiet', '--format', 'csv,xlsx', '--out-dir', fromClone])).code,
    ).toBe(0);
    const out = join(elsewhere, outName!);
    expect(readdirSync(out).sort()).toEqual(readdirSync(fromClone).sort());
    for (const f of readdirSync(fromClone).filter((n) => n.endsWith('.json') && !n.startsWith('_'))) {
      expect(readFileSync(join(out, f)).equals(readFileSync(join(fromClone, f))), f).toBe(true);
    }
  }, 300_000);

  it('from the clone (npm install -g <path>): the command runs the clone from any directory', async () => {
    const work = realpathSync(tmpDir('svc-install-'));
    const prefix = join(work, 'prefix');
    await installGlobal(prefix, REPO_ROOT, work, ['--ignore-scripts']);
    expect(realpathSync(join(prefix, 'lib', 'node_modules', PKG.name))).toBe(realpathSync(REPO_ROOT));
    const version = await installed(prefix, ['--version'], work);
    expect(version).toEqual({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
    const replay = await installed(prefix, ['--replay', RECORDING, '--quiet', '--out-dir', 'snap'], work);
    expect(replay).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(join(work, 'snap'))).toContain('_snapshot-manifest.json');
  }, 300_000);
});
