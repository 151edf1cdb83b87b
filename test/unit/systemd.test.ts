import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_BIN, REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { OPTIONS } from '../../src/cli/options.js';

// docs/systemd: the unit files the README tells admins to install.
const DIR = join(REPO_ROOT, 'docs', 'systemd');
const service = readFileSync(join(DIR, 'svc-snapshot.service'), 'utf8');
const timer = readFileSync(join(DIR, 'svc-snapshot.timer'), 'utf8');
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
const INSTALLED_BIN = '/usr/local/bin/svc-snapshot';

/** Directive lines (comments and blanks dropped) as [key, value]. */
function directives(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/**
 * `systemd-analyze verify` on copies whose ExecStart names this checkout's
 * binary (verify refuses a command that does not exist). It exits 0 on
 * unknown keys and bad values, only printing them, so any output fails.
 */
function verify(serviceText: string): { status: number | null; output: string } {
  const dir = tmpDir();
  writeFileSync(join(dir, 'svc-snapshot.service'), serviceText.replaceAll(INSTALLED_BIN, CLI_BIN));
  writeFileSync(join(dir, 'svc-snapshot.timer'), timer);
  const res = spawnSync(
    ANALYZE!,
    ['verify', '--man=no', join(dir, 'svc-snapshot.service'), join(dir, 'svc-snapshot.timer')],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, SYSTEMD_LOG_COLOR: '0' },
    },
  );
  return { status: res.status, output: `${res.stdout}${res.stderr}`.trim() };
}

describe('docs/systemd units', () => {
  it.skipIf(!ANALYZE)('pass systemd-analyze verify without a single warning', () => {
    expect(service).toContain(`ExecStart=${INSTALLED_BIN} `);
    expect(verify(service)).toEqual({ status: 0, output: '' });
  });

  it.skipIf(!ANALYZE)('would be caught by that check if a directive were wrong (the check can fail)', () => {
    expect(verify(`${service}ProtectSystem=strictest\n`).output).toMatch(/ProtectSystem|protect system/i);
    expect(
      verify(service.replace('SystemCallFilter=@system-service', 'SystemCallFilter=@system-servic')).output,
    ).toMatch(/system call group/i);
  });

  it('hardens the service and keeps the token out of the unit', () => {
    const d = directives(service);
    const has = (k: string, v?: string) => d.some(([key, value]) => key === k && (v === undefined || value === v));
    for (const [k, v] of [
      ['Type', 'oneshot'],
      ['EnvironmentFile', '/etc/svc-snapshot/env'],
      ['StateDirectory', 'svc-snapshot'],
      ['StateDirectoryMode', '0700'],
      ['UMask', '0077'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['NoNewPrivileges', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
    ] as const) {
      expect(has(k, v), `${k}=${v}`).toBe(true);
    }
    expect(has('User')).toBe(true);
    // The token reaches the run as a credential file, never as a value in the unit or on the command line.
    expect(has('LoadCredential', 'token:/etc/svc-snapshot/token')).toBe(true);
    expect(d.filter(([k]) => k === 'Environment')).toEqual([['Environment', 'SVC_TOKEN_FILE=%d/token']]);
    expect(d.map(([, v]) => v).join('\n')).not.toMatch(/--token|--audit-token|--ca-file/);
    expect(directives(timer).some(([k, v]) => k === 'Persistent' && v === 'true')).toBe(true);
  });

  it('starts the binary with options that exist for a snapshot, --keep and --metrics-file among them, and no variable (the optional ones are read from the environment)', () => {
    const exec = directives(service).find(([k]) => k === 'ExecStart')![1];
    const flags = exec.split(/\s+/).filter((w) => w.startsWith('--'));
    const known = new Set(OPTIONS.filter((o) => o.commands.includes('snapshot')).map((o) => o.flags.split(' ')[0]));
    for (const f of flags) expect(known.has(f), f).toBe(true);
    expect(flags).toEqual(expect.arrayContaining(['--keep', '--metrics-file', '--quiet']));
    // An unset variable there would be an empty argument (--ping-url "" is a usage error): SVC_PING_URL is read by the tool itself.
    expect(exec).not.toContain('$');
    expect(OPTIONS.find((o) => o.key === 'pingUrl')?.env).toBe('SVC_PING_URL');
  });
});
