/**
 * The option records are the one source of every option's default, parser,
 * environment variable and conflicts: what help shows is what a run uses,
 * what the README's tables say is what the records say, and every conflict a
 * record names is refused (exit 2) naming both flags.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import { resolveAuditSettings } from '../../src/audit/settings.js';
import { OPTIONS, readOptions, refuseConflicts } from '../../src/config/options.js';
import { resolveConnection } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { clearSecrets, redact } from '../../src/util/redact.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { REPO_ROOT, runCli } from '../helpers/run-cli.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const flagOf = (key: string) => OPTIONS.find((o) => o.key === key)!.flags.split(' ')[0]!;

/** "(…; default X)" as `--help` prints it for a flag. */
async function helpDefault(command: string, flag: string): Promise<string | undefined> {
  const res = await runCli([command, '--help']);
  const text = res.stdout.replace(/\n\s+/g, ' ');
  const m = new RegExp(`${flag}\\b[^\\n]*?default ([^);]+)\\)`).exec(text);
  return m?.[1]?.trim();
}

const ENV = { SVC_BASE_URL: 'https://platform.example.org', SVC_TOKEN: 'T0ken-for-option-records-test' };
const AUDIT_ENV = { SVC_AUDIT_URL: 'https://audit.example.org', SVC_AUDIT_TOKEN: 'abcdefghijklmnopqrstuv==' };

describe('the option records', () => {
  it.each([
    ['snapshot', 'timeout', () => resolveConnection(readOptions('snapshot', {}, ENV), ENV).timeoutMs / 1000],
    ['snapshot', 'concurrency', () => resolveConnection(readOptions('snapshot', {}, ENV), ENV).concurrency],
    ['snapshot', 'retries', () => resolveConnection(readOptions('snapshot', {}, ENV), ENV).retries],
    ['snapshot', 'realms', () => resolveConnection(readOptions('snapshot', {}, ENV), ENV).realms],
    ['audit', 'from', () => resolveAuditSettings(readOptions('audit', {}, AUDIT_ENV), AUDIT_ENV).from],
    ['audit', 'to', () => resolveAuditSettings(readOptions('audit', {}, AUDIT_ENV), AUDIT_ENV).to],
  ] as const)('%s --%s: the default help shows is the value a run uses', async (command, key, used) => {
    const shown = await helpDefault(command, flagOf(key));
    expect(shown, `help of ${command} shows no default for ${flagOf(key)}`).toBeDefined();
    // What the run would use if the user typed the shown default.
    const typed = (readOptions(command, { [key]: shown }, {}) as unknown as Record<string, unknown>)[key];
    expect(used()).toEqual(typed);
  });

  it("keys each record by the property commander gives its flag's value", () => {
    for (const o of OPTIONS) expect(o.key, o.flags).toBe(new Option(o.flags).attributeName());
    expect(OPTIONS.find((o) => o.flags.startsWith('--token-vm'))?.key).toBe('tokenVm');
  });

  it('documents every option with an environment variable in a README table row, beside its flag', () => {
    const rows = README.split('\n').filter((l) => l.startsWith('| `--'));
    for (const o of OPTIONS.filter((r) => r.env !== undefined && !r.removed)) {
      const flag = o.flags.split(' ')[0]!;
      const row = rows.find((r) => r.includes(`\`${flag}`) && r.includes(o.env!));
      expect(row, `README has no options row with ${flag} and ${o.env}`).toBeDefined();
    }
  });

  it('refuses every conflict a record names, naming both flags, as a usage error (exit 2)', () => {
    const pairs = OPTIONS.flatMap((o) => (o.conflicts ? o.conflicts.keys.map((k) => [o, k] as const) : []));
    expect(pairs.length).toBeGreaterThan(0);
    for (const [o, other] of pairs) {
      for (const command of o.commands) {
        let thrown: unknown;
        try {
          refuseConflicts(command, { [o.key]: 'x', [other]: 'y' });
        } catch (e) {
          thrown = e;
        }
        expect(thrown, `${o.flags} with ${other} on ${command}`).toBeInstanceOf(UsageError);
        expect(exitCodeOf(thrown as UsageError)).toBe(2);
        expect((thrown as Error).message).toContain(flagOf(o.key));
        expect((thrown as Error).message).toContain(flagOf(other));
      }
      expect(() => refuseConflicts(o.commands[0]!, { [o.key]: 'x' })).not.toThrow();
    }
  });

  it('through the binary: --replay with server options is refused before anything is read', async () => {
    const res = await runCli(
      ['--replay', '/nonexistent-collection', '--base-url', 'https://platform.example.org', '--realms', 'a'],
      { env: { SVC_TOKEN: ENV.SVC_TOKEN } },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--replay builds from files and talks to no server; drop --base-url, --realms/);
    expect(res.stderr).not.toContain(ENV.SVC_TOKEN);
  });

  it('through the binary: --replay with each server option alone is refused naming both flags', async () => {
    const replay = OPTIONS.find((o) => o.key === 'replay')!;
    const values: Record<string, string> = { baseUrl: 'https://platform.example.org', realms: 'libvirt' };
    const secret = 'T0ken-typed-with-replay-0123456789';
    const runs = await Promise.all(
      replay.conflicts!.keys.map(async (k) => ({
        flag: flagOf(k),
        res: await runCli(['snapshot', '--replay', '/nonexistent-collection', flagOf(k), values[k] ?? secret]),
      })),
    );
    for (const { flag, res } of runs) {
      expect(res.code, `${flag}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toContain(`--replay ${replay.conflicts!.why}; drop ${flag}\n`);
      expect(res.stderr).not.toContain(secret);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('--history: the default help shows is the database a run without a value uses', async () => {
    const shown = await helpDefault('history', '--history');
    expect(shown).toBe(OPTIONS.find((o) => o.key === 'history')!.defaultText);
    expect(parseHistoryTarget(shown!, '/srv/runs')).toEqual(parseHistoryTarget(true, '/srv/runs'));
  });

  it('parses through the record: a bad value is refused naming the flag', () => {
    expect(() => readOptions('collect', { concurrency: '0' }, {}).concurrency).toThrow(
      /--concurrency must be a whole number from 1 to 64/,
    );
    expect(() => readOptions('audit', { timeout: 'soon' }, {}).timeout).toThrow(
      /--timeout must be a number greater than 0/,
    );
    expect(() => readOptions('snapshot', { realms: ' , ' }, {}).realms).toThrow(/--realms needs at least one realm id/);
    expect(() => readOptions('snapshot', { keep: '0' }, {}).keep).toThrow(
      /--keep must be a whole number of at least 1/,
    );
    expect(() => readOptions('audit', { from: '2026-02-30' }, {}).from).toThrow(/--from must be a calendar date/);
  });

  it('takes plain decimal numbers only: no hex, exponent, sign or spaces; --notify-timeout from 1 s', () => {
    const o = readOptions(
      'snapshot',
      { timeout: '2.5', notifyTimeout: '1', expiringDays: '0', waiversMaxDays: '007' },
      {},
    );
    expect(o).toMatchObject({ timeout: 2.5, notifyTimeout: 1, expiringDays: 0, waiversMaxDays: 7 });
    for (const bad of ['0x10', '1e2', ' 5', '5 ', '+5', '-0', '.5', '5.', 'Infinity', '1_000', '０'])
      expect(() => readOptions('snapshot', { notifyTimeout: bad }, {}).notifyTimeout, bad).toThrow(
        /--notify-timeout must be a number from 1 to 3600/,
      );
    for (const bad of ['0.5', '1e-9', '0'])
      expect(() => readOptions('snapshot', { notifyTimeout: bad }, {}).notifyTimeout, bad).toThrow(
        `--notify-timeout must be a number from 1 to 3600 (got "${bad}")`,
      );
    expect(() => readOptions('snapshot', { notifyInterval: '0x10' }, {}).notifyInterval).toThrow(
      /--notify-interval must be a number greater than 0/,
    );
    for (const [key, flag] of [
      ['waiversMaxDays', '--waivers-max-days'],
      ['expiringDays', '--expiring-days'],
      ['concurrency', '--concurrency'],
      ['keep', '--keep'],
    ] as const)
      for (const bad of ['0x10', ' 5', '1e2', '2.0'])
        expect(() => readOptions('snapshot', { [key]: bad }, {})[key], `${flag} ${bad}`).toThrow(
          new RegExp(`${flag} must be a whole number`),
        );
    expect(() => readOptions('convert', { format: 'csv,pdf' }, {}).format).toThrow(/"pdf" is not one of them/);
  });
});

describe("readOptions: records + flags + environment → a command's options", () => {
  afterEach(() => clearSecrets());

  it("gives every option of the command its record's default when nothing is given, and none of another command", () => {
    const o = readOptions('snapshot', {}, {});
    expect(o).toMatchObject({
      timeout: 30,
      concurrency: 6,
      retries: 3,
      realms: ['libvirt'],
      format: [],
      raw: false,
      json: false,
      baseUrl: undefined,
      sources: {},
    });
    expect('auditUrl' in o).toBe(false);
    // --from is the audit period's first day, not where a value came from.
    expect(readOptions('audit', { from: '2026-11-01' }, {})).toMatchObject({
      from: '2026-11-01',
      to: '2037-12-31',
      sources: { from: '--from' },
    });
    // A default that differs by command: convert writes both spreadsheet forms unless told otherwise.
    expect(readOptions('convert', {}, {}).format).toEqual(['csv', 'xlsx']);
  });

  it('a flag beats its variable; an empty variable counts as unset; where each value came from is kept', () => {
    const env = { SVC_BASE_URL: 'https://env.example.org/api', SVC_AUDIT_URL: '' };
    expect(readOptions('snapshot', {}, env)).toMatchObject({
      baseUrl: 'https://env.example.org',
      sources: { baseUrl: 'SVC_BASE_URL' },
    });
    expect(readOptions('snapshot', { baseUrl: 'https://flag.example.org' }, env)).toMatchObject({
      baseUrl: 'https://flag.example.org',
      sources: { baseUrl: '--base-url' },
    });
    expect(readOptions('audit', {}, env).auditUrl).toBeUndefined();
    // A bad variable is refused naming the variable, not a flag the user never typed.
    expect(() => readOptions('snapshot', {}, { SVC_BASE_URL: 'ftp://x.example.org' }).baseUrl).toThrow(/SVC_BASE_URL/);
  });

  it('a token variable beats its flag (envWins), and both are registered as secrets whichever is used', () => {
    const env = { SVC_TOKEN: 'env-token-0123456789', SVC_TOKEN_VM: 'env-vm-token-0123456789' };
    const o = readOptions('collect', { token: 'flag-token-0123456789', tokenDrive: 'flag-drive-0123456789' }, env);
    expect(o.token).toEqual({ value: 'env-token-0123456789', source: 'SVC_TOKEN' });
    expect(o.tokenVm).toEqual({ value: 'env-vm-token-0123456789', source: 'SVC_TOKEN_VM' });
    expect(o.tokenDrive).toEqual({ value: 'flag-drive-0123456789', source: '--token-drive' });
    expect(redact('a flag-token-0123456789 b env-token-0123456789')).not.toMatch(/flag-token|env-token/);
  });

  it('parses a value when the command reads it: a bad variable the command does not use stops nothing', () => {
    const env = { SVC_TOKEN: 'has a space', SVC_AUDIT_TOKEN: 'not-an-audit-token' };
    const replay = readOptions('snapshot', { replay: '/some/collection' }, env);
    expect(replay.replay).toBe('/some/collection');
    expect(() => replay.token).toThrow(/the token in SVC_TOKEN contains spaces/);
    const check = readOptions('check', { audit: true }, { ...env, SVC_AUDIT_TOKEN: 'abcdefghijklmnopqrstuv==' });
    expect(check.auditToken).toEqual({ value: 'abcdefghijklmnopqrstuv==', source: 'SVC_AUDIT_TOKEN' });
  });

  it('refuses a conflict before reading any value', () => {
    expect(() => readOptions('snapshot', { replay: 'x', baseUrl: 'not a url', timeout: 'soon' }, {})).toThrow(
      /--replay builds from files and talks to no server; drop --base-url/,
    );
  });
});
