/**
 * `--json` when a run ends with an error: one object on stdout, as for a run
 * that finishes (docs/summary-schema.json, `$defs.failure`), checked with a
 * JSON Schema validator against the committed schema document itself, not
 * against the zod schemas it is generated from.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPublishedShape, publishedValidator } from '../helpers/summary-schema.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, startCli, stderrSeen, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';

/** Validates `text` (all of stdout) as one JSON object of `$defs.<name>`; returns it. */
function validOutput(name: string, text: string): Record<string, unknown> {
  const value = JSON.parse(text) as Record<string, unknown>;
  expectPublishedShape(name, value);
  return value;
}

const TOKEN = ALL_TYPES_TOKEN.value;
let site: FakeSite;
beforeAll(async () => {
  site = await startFakeSite();
});
afterAll(async () => {
  await site.close();
});

describe('--json on a failed run prints one object', () => {
  it('snapshot with a failed route (exit 1): the error, and the output directory it did not publish', async () => {
    const cwd = tmpDir();
    site.backend.setFault('teams', { statuses: [500], always: true });
    try {
      const res = await runCli(
        ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap', '--retries', '0', '--json'],
        { env: { SVC_TOKEN: TOKEN }, cwd },
      );
      expect(res.code).toBe(1);
      const out = validOutput('failure', res.stdout);
      expect(out).toMatchObject({
        command: 'snapshot',
        ok: false,
        exitCode: 1,
        published: [],
        notPublished: [join(cwd, 'snap')],
        outcome: 'nothing was published',
      });
      expect(out.error).toMatch(/GET \/api\/teams/);
      expect(res.stdout).not.toContain(TOKEN);
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      site.backend.clearFaults();
    }
  });

  it('snapshot with a refused token (exit 3)', async () => {
    const res = await runCli(
      ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', join(tmpDir(), 's'), '--json'],
      { env: { SVC_TOKEN: 'fake-token-unknown' } },
    );
    expect(res.code).toBe(3);
    const out = validOutput('failure', res.stdout);
    expect(out).toMatchObject({ command: 'snapshot', exitCode: 3, published: [] });
    expect(out.error).toMatch(/^401 on GET \/api\/realms: the token \(from SVC_TOKEN\) was refused/);
    expect(res.stdout).not.toContain('fake-token-unknown');
  });

  it('audit with a bad --objects type (exit 2): a usage error before any request', async () => {
    const res = await runCli(['audit', '--audit-url', 'https://127.0.0.1:9', '--objects', '../etc', '--json'], {
      env: { SVC_AUDIT_TOKEN: 'abcdefghijklmnopqrstuv==' },
    });
    expect(res.code).toBe(2);
    const out = validOutput('failure', res.stdout);
    expect(out).toMatchObject({
      command: 'audit',
      exitCode: 2,
      published: [],
      notPublished: [],
      outcome: 'nothing was published',
    });
    expect(out.error).toMatch(/--objects/);
  });

  it('a flag the command does not know (exit 2), and history load with a damaged snapshot (exit 1)', async () => {
    const unknown = await runCli(['collect', '--json', '--no-such-flag']);
    expect(unknown.code).toBe(2);
    expect(validOutput('failure', unknown.stdout)).toMatchObject({
      command: 'collect',
      exitCode: 2,
      error: "unknown option '--no-such-flag'",
    });

    // A value given with = to a command that does not take the option may be a secret: never repeated.
    const secret = 'https://hooks.example.invalid/services/T0/B0/s3cr3tV4lue';
    for (const args of [
      ['report', 'x', `--notify=${secret}`, '--json'],
      ['check', `--tokn=${secret}`, '--json'],
      [secret, '--json'],
    ]) {
      const r = await runCli(args);
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain('s3cr3t');
      expect(validOutput('failure', r.stdout).error).toMatch(/^unknown (option '--\w+=…'|command;)/);
    }

    const cwd = tmpDir();
    mkdirSync(join(cwd, 'not-a-snapshot'));
    writeFileSync(join(cwd, 'not-a-snapshot', 'notes.txt'), 'hello');
    const load = await runCli(['history', 'load', 'not-a-snapshot', '--history=h.sqlite', '--json'], { cwd });
    expect([1, 2]).toContain(load.code);
    expect(validOutput('failure', load.stdout)).toMatchObject({ command: 'history load', exitCode: load.code });
  });

  it.each(['verify', 'findings', 'report', 'notify', 'convert', 'diff', 'check'])(
    '%s with a flag it does not know (exit 2): the object names that command',
    async (command) => {
      const res = await runCli([command, '--json', '--no-such-flag']);
      expect(res.code).toBe(2);
      expect(validOutput('failure', res.stdout)).toMatchObject({ command, exitCode: 2 });
    },
  );

  it('SIGTERM during a snapshot (exit 143): one object saying nothing was published', async () => {
    const cwd = tmpDir();
    site.backend.setFault('drives', { delayMs: 20_000 });
    try {
      const { child, result } = startCli(
        ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap', '--json'],
        { env: { SVC_TOKEN: TOKEN }, cwd },
      );
      await stderrSeen(child, 'GET /api/users');
      child.kill('SIGTERM');
      const res = await result;
      expect(res.code).toBe(143);
      expect(validOutput('failure', res.stdout)).toMatchObject({
        command: 'snapshot',
        exitCode: 143,
        published: [],
        outcome: 'nothing was published',
      });
      expect(existsSync(join(cwd, 'snap'))).toBe(false);
    } finally {
      site.backend.clearFaults();
    }
  });

  it('is not printed when the command printed its own summary (collect with failed routes, exit 4)', async () => {
    site.backend.setFault('teams', { statuses: [500], always: true });
    try {
      const res = await runCli(
        [
          'collect',
          '--base-url',
          site.url,
          '--ca-file',
          site.caFile,
          '--out-dir',
          join(tmpDir(), 'c'),
          '--retries',
          '0',
          '--json',
        ],
        { env: { SVC_TOKEN: TOKEN } },
      );
      expect(res.code).toBe(4);
      expect(validOutput('collect', res.stdout)).toMatchObject({ command: 'collect', complete: false });
    } finally {
      site.backend.clearFaults();
    }
  });
});

describe('docs/summary-schema.json, read by a JSON Schema validator', () => {
  it('accepts the summaries of runs that finish', async () => {
    const replay = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      '--out-dir',
      join(tmpDir(), 's'),
      '--json',
    ]);
    expect(replay.code).toBe(0);
    validOutput('snapshot', replay.stdout);
    const check = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile, '--json'], {
      env: { SVC_TOKEN: TOKEN },
    });
    expect(check.code).toBe(0);
    expect(validOutput('check', check.stdout).tls).toEqual({ used: true, ok: true });
  });

  it('refuses an object that is not a failure summary', () => {
    const validate = publishedValidator('failure');
    expect(
      validate({ command: 'snapshot', ok: true, exitCode: 0, error: '', published: [], notPublished: [], outcome: '' }),
    ).toBe(false);
    expect(
      validate({
        command: 'snapshot',
        ok: false,
        exitCode: 1,
        error: 'x',
        published: [],
        notPublished: [],
        outcome: 'x',
        extra: 1,
      }),
    ).toBe(false);
  });
});
