/**
 * Every example of the `--help` texts and of README.md that can run offline
 * (no URL of a server, no path of this machine's /etc or /var, nothing left
 * as `…`) runs as written, through a shell, in a directory holding the
 * shipped recordings as raw collections and their snapshots, and exits as
 * documented: diff 5 when something changed, --fail-on 6 when a finding of
 * that severity is there, 0 otherwise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_BIN, REPO_ROOT, cliEnv, runCli, tmpDir } from '../helpers/run-cli.js';

const COMMANDS = ['snapshot', 'collect', 'audit', 'check', 'diff', 'convert', 'findings', 'history', 'report'];
const MORE = ['notify', 'verify'];
const NIGHTS = [
  ['platform-3.14.1', '2026-11-21'],
  ['platform-3.14.1-night2', '2026-11-22'],
] as const;

/** What an example needs that this test cannot give it offline (an archive's key: test/e2e/verify-archive.test.ts). */
const NOT_OFFLINE =
  /https?:\/\/|postgres:\/\/|\/etc\/|\/var\/|\/srv\/|\/archive\/|…|\$\(|allowed_signers|--audit|--objects|restore-key\.txt/;

function helpExamples(help: string): string[] {
  const at = help.indexOf('Examples:\n');
  if (at < 0) return [];
  return help
    .slice(at)
    .split('\n')
    .filter((l) => l.startsWith('  $ '))
    .map((l) => l.slice(4).trim());
}

function readmeExamples(): string[] {
  const text = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const blocks = [...text.matchAll(/```(?:sh|bash|console)\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) =>
    b
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^([A-Z_]+=\S+ )*svc-snapshot( |$)/.test(l)),
  );
}

/** The exit code the example documents. */
function expected(example: string): number {
  if (/^(\S+=\S+ )*svc-snapshot diff /.test(example)) return 5;
  if (/--fail-on (high|critical|medium)/.test(example)) return 6;
  return 0;
}

let work: string;
let bin: string;
const examples: string[] = [];

beforeAll(async () => {
  work = tmpDir('svc-examples-');
  bin = join(work, '.bin');
  mkdirSync(bin);
  // `svc-snapshot` on PATH, as an installed package puts it.
  writeFileSync(join(bin, 'svc-snapshot'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`);
  chmodSync(join(bin, 'svc-snapshot'), 0o755);
  for (const [recording, date] of NIGHTS) {
    cpSync(join(REPO_ROOT, 'recordings', recording), join(work, `svc-snapshot-raw-${date}`), { recursive: true });
    const res = await runCli(['--replay', `svc-snapshot-raw-${date}`, '--quiet'], { cwd: work });
    expect(res.code, res.stderr).toBe(0);
  }
  for (const command of [...COMMANDS, ...MORE]) {
    const res = await runCli([command, '--help']);
    expect(res.code).toBe(0);
    examples.push(...helpExamples(res.stdout));
  }
  examples.push(...readmeExamples());
}, 120_000);

describe('the examples of --help and README.md', () => {
  it('are found: every command has some, and the README has some', () => {
    expect(examples.length).toBeGreaterThan(30);
    expect(examples.filter((e) => !NOT_OFFLINE.test(e)).length).toBeGreaterThan(10);
  });

  it('that run offline exit as documented, as written', () => {
    const failed: string[] = [];
    for (const example of examples.filter((e) => !NOT_OFFLINE.test(e))) {
      const res = spawnSync('/bin/sh', ['-c', example], {
        cwd: work,
        env: cliEnv({ PATH: `${bin}:${process.env.PATH}` }),
        encoding: 'utf8',
        timeout: 120_000,
      });
      if (res.status !== expected(example))
        failed.push(`${example}\n  exit ${res.status}, expected ${expected(example)}: ${res.stderr.trim()}`);
    }
    expect(failed).toEqual([]);
  }, 600_000);
});
