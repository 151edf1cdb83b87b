/**
 * The option records are the one source of every option's default, parser,
 * environment variable and conflicts: what help shows is what a run uses,
 * what the README's tables say is what the records say, and every conflict a
 * record names is refused (exit 2) naming both flags.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import { resolveAuditSettings } from '../../src/audit/settings.js';
import { OPTIONS, refuseConflicts, valueOf, type OptionKey } from '../../src/config/options.js';
import { resolveConnection } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
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
    ['snapshot', 'timeout', () => resolveConnection({}, ENV).timeoutMs / 1000],
    ['snapshot', 'concurrency', () => resolveConnection({}, ENV).concurrency],
    ['snapshot', 'retries', () => resolveConnection({}, ENV).retries],
    ['snapshot', 'realms', () => resolveConnection({}, ENV).realms],
    ['audit', 'from', () => resolveAuditSettings({}, AUDIT_ENV).from],
    ['audit', 'to', () => resolveAuditSettings({}, AUDIT_ENV).to],
  ] as const)('%s --%s: the default help shows is the value a run uses', async (command, key, used) => {
    const shown = await helpDefault(command, flagOf(key));
    expect(shown, `help of ${command} shows no default for ${flagOf(key)}`).toBeDefined();
    // What the run would use if the user typed the shown default.
    const typed = key === 'from' || key === 'to' ? shown : valueOf(key as OptionKey, { [key]: shown });
    expect(used()).toEqual(typed);
  });

  it('documents every option with an environment variable in a README table row, beside its flag', () => {
    const rows = README.split('\n').filter((l) => l.startsWith('| `--'));
    for (const o of OPTIONS.filter((r) => r.env !== undefined)) {
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
    const res = await runCli(['--replay', '/nonexistent-collection', '--base-url', 'https://platform.example.org', '--realms', 'a'], { env: { SVC_TOKEN: ENV.SVC_TOKEN } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--replay builds from files and talks to no server; drop --base-url, --realms/);
    expect(res.stderr).not.toContain(ENV.SVC_TOKEN);
  });

  it('through the binary: --replay with each server option alone is refused naming both flags', async () => {
    const replay = OPTIONS.find((o) => o.key === 'replay')!;
    const values: Record<string, string> = { baseUrl: 'https://platform.example.org', realms: 'libvirt' };
    const secret = 'T0ken-typed-with-replay-0123456789';
    const runs = await Promise.all(
      replay.conflicts!.keys.map(async (k) => ({ flag: flagOf(k), res: await runCli(['snapshot', '--replay', '/nonexistent-collection', flagOf(k), values[k] ?? secret]) })),
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
    expect(() => valueOf('concurrency', { concurrency: '0' })).toThrow(/--concurrency must be a whole number from 1 to 64/);
    expect(() => valueOf('timeout', { timeout: 'soon' })).toThrow(/--timeout must be a number greater than 0/);
    expect(() => valueOf('realms', { realms: ' , ' })).toThrow(/--realms needs at least one realm id/);
  });
});
