import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';

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
});

/**
 * `npm start` and `npm test` as the first command typed in a fresh clone
 * (README, "The two commands"): scripts/bootstrap.mjs, run first by both,
 * decides what is missing and runs the npm that runs it (npm_execpath). Here
 * that npm is a stand-in that records its arguments and does what npm ci and
 * npm run build leave behind, so no test waits for the registry; a real
 * fresh clone is checked by hand (see the commit that added this).
 */
describe('scripts/bootstrap.mjs in a fresh clone', () => {
  const FAKE_NPM = `
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
appendFileSync(process.env.FAKE_NPM_LOG, JSON.stringify({ args, cwd: process.cwd() }) + '\\n');
const exit = Number(process.env.FAKE_NPM_EXIT ?? 0);
if (exit !== 0) process.exit(exit);
if (args[0] === 'ci') {
  mkdirSync('node_modules', { recursive: true });
  writeFileSync('node_modules/.package-lock.json', '{}');
}
if ((args[0] === 'ci' && !process.env.FAKE_NPM_IGNORE_SCRIPTS) || args.join(' ') === 'run build') {
  mkdirSync('lib', { recursive: true });
  writeFileSync('lib/main.js', '');
}
`;

  function clone(): {
    repo: string;
    bootstrap: (
      target: string,
      env?: Record<string, string>,
    ) => { code: number | null; stderr: string; stdout: string; npm: Array<{ args: string[]; cwd: string }> };
  } {
    const repo = realpathSync(tmpDir('svc-fresh-clone-'));
    mkdirSync(join(repo, 'scripts'));
    copyFileSync(join(REPO_ROOT, 'scripts', 'bootstrap.mjs'), join(repo, 'scripts', 'bootstrap.mjs'));
    const npm = join(repo, 'fake-npm-cli.mjs');
    writeFileSync(npm, FAKE_NPM);
    const log = join(repo, 'npm.log');
    const bootstrap = (target: string, env: Record<string, string> = {}) => {
      writeFileSync(log, '');
      // From another directory, as npm runs a script from the package's root whatever the shell's directory.
      const r = spawnSync(process.execPath, [join(repo, 'scripts', 'bootstrap.mjs'), target], {
        cwd: tmpDir(),
        encoding: 'utf8',
        env: { PATH: process.env.PATH, npm_execpath: npm, FAKE_NPM_LOG: log, ...env },
      });
      const calls = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { args: string[]; cwd: string });
      return { code: r.status, stderr: r.stderr, stdout: r.stdout, npm: calls };
    };
    return { repo, bootstrap };
  }

  it('npm start with nothing installed: one line, npm ci in the clone (which builds lib/); the second time nothing', () => {
    const { repo, bootstrap } = clone();
    const first = bootstrap('start');
    expect(first).toEqual({
      code: 0,
      stdout: '',
      stderr:
        'npm start: the dependencies are not installed in this clone: installing the locked versions (npm ci) and building lib/, once\n',
      npm: [{ args: ['ci', '--no-audit', '--no-fund'], cwd: repo }],
    });
    expect(bootstrap('start')).toEqual({ code: 0, stdout: '', stderr: '', npm: [] });
    expect(bootstrap('test')).toEqual({ code: 0, stdout: '', stderr: '', npm: [] });
  });

  it('npm test with nothing installed runs npm ci; with the dependencies there it leaves the build to npm test', () => {
    const { repo, bootstrap } = clone();
    const first = bootstrap('test');
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(
      'npm test: the dependencies are not installed in this clone: installing the locked versions (npm ci) and building lib/, once\n',
    );
    expect(first.npm).toEqual([{ args: ['ci', '--no-audit', '--no-fund'], cwd: repo }]);
    rmSync(join(repo, 'lib'), { recursive: true });
    expect(bootstrap('test')).toEqual({ code: 0, stdout: '', stderr: '', npm: [] });
  });

  it('npm start with the dependencies but no lib/ (or npm ci with scripts turned off) builds it', () => {
    const { repo, bootstrap } = clone();
    const ignored = bootstrap('start', { FAKE_NPM_IGNORE_SCRIPTS: '1' });
    expect(ignored.code).toBe(0);
    expect(ignored.npm.map((c) => c.args.join(' '))).toEqual(['ci --no-audit --no-fund', 'run build']);
    expect(ignored.stderr.split('\n')[1]).toBe('npm start: lib/ is not built: building it (npm run build), once');
    rmSync(join(repo, 'lib'), { recursive: true });
    const build = bootstrap('start');
    expect(build).toEqual({
      code: 0,
      stdout: '',
      stderr: 'npm start: lib/ is not built: building it (npm run build), once\n',
      npm: [{ args: ['run', 'build'], cwd: repo }],
    });
  });

  it('an install that fails (or was interrupted before npm wrote its lockfile) stops with exit 1 and what to do; it is tried again next time', () => {
    const { repo, bootstrap } = clone();
    const failed = bootstrap('start', { FAKE_NPM_EXIT: '1' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /\nnpm start: npm ci --no-audit --no-fund failed \(exit 1\); fix what it says above and run npm start again\n$/,
    );
    expect(failed.npm).toHaveLength(1);
    // A node_modules/ without npm's hidden lockfile is an install that did not finish.
    mkdirSync(join(repo, 'node_modules', 'commander'), { recursive: true });
    expect(bootstrap('test').npm.map((c) => c.args[0])).toEqual(['ci']);
    expect(bootstrap('other').code).toBe(2);
  });

  it('package.json runs it first in start and test, and what runs before node_modules/ exists uses Node built-ins only', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toMatch(/^node scripts\/bootstrap\.mjs start && node bin\/svc-snapshot\.js /);
    expect(pkg.scripts.test).toMatch(/^node scripts\/test-prereqs\.mjs && node scripts\/bootstrap\.mjs test && /);
    for (const script of ['bootstrap.mjs', 'test-prereqs.mjs']) {
      const text = readFileSync(join(REPO_ROOT, 'scripts', script), 'utf8');
      const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
      expect(imports.length, script).toBeGreaterThan(0);
      expect(
        imports.filter((m) => !m!.startsWith('node:')),
        script,
      ).toEqual([]);
      expect(text, script).not.toMatch(/\bimport\(|require\(/);
    }
  });
});
