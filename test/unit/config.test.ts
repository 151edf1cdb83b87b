import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveTokens as tokensOf } from '../../src/config/tokens.js';
import { readOptions } from '../../src/config/options.js';
import { normaliseServiceUrl, isLoopbackHost } from '../../src/config/url.js';
import { resolveConnection as connectionOf } from '../../src/config/settings.js';
import { parseRealms } from '../../src/config/values.js';
import { UsageError } from '../../src/errors.js';
import { tmpDir } from '../helpers/run-cli.js';
import { clearSecrets, redact } from '../../src/util/redact.js';

afterEach(() => clearSecrets());

// Flags as commander gives them and the environment, read by the option records as a run reads them.
const resolveTokens = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv) =>
  tokensOf(readOptions('collect', flags, env));
const resolveConnection = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv) =>
  connectionOf(readOptions('collect', flags, env), env);

describe('token precedence (CONTRACT section 2)', () => {
  it('uses SVC_TOKEN for every type when it is the only token', () => {
    const plan = resolveTokens({}, { SVC_TOKEN: 'fake-env-all' });
    expect(plan.authMode).toBe('token');
    for (const t of ['User', 'Team', 'Drive', 'VM', 'Project'] as const)
      expect(plan.byType[t]?.source).toBe('SVC_TOKEN');
  });

  it('prefers SVC_TOKEN over --token', () => {
    const plan = resolveTokens({ token: 'fake-flag-all' }, { SVC_TOKEN: 'fake-env-all' });
    expect(plan.byType.User?.value).toBe('fake-env-all');
    expect(plan.secrets).toEqual(['fake-env-all']);
  });

  it('uses --token when no environment token is set', () => {
    const plan = resolveTokens({ token: 'fake-flag-all' }, {});
    expect(plan.byType.VM).toEqual({ value: 'fake-flag-all', source: '--token' });
    expect(plan.authMode).toBe('token');
  });

  it('prefers a per-type token over the general ones, and the environment over the flag of that type', () => {
    const plan = resolveTokens(
      { token: 'fake-flag-all', tokenVm: 'fake-flag-vm', tokenUser: 'fake-flag-user' },
      { SVC_TOKEN: 'fake-env-all', SVC_TOKEN_USER: 'fake-env-user' },
    );
    expect(plan.byType.User).toEqual({ value: 'fake-env-user', source: 'SVC_TOKEN_USER' });
    expect(plan.byType.VM).toEqual({ value: 'fake-flag-vm', source: '--token-vm' });
    expect(plan.byType.Team).toEqual({ value: 'fake-env-all', source: 'SVC_TOKEN' });
    expect(plan.authMode).toBe('per-type');
    expect([...plan.secrets].sort()).toEqual(['fake-env-all', 'fake-env-user', 'fake-flag-vm']);
  });

  it('leaves a type without a token when only per-type tokens are given', () => {
    const plan = resolveTokens({ tokenDrive: 'fake-drive' }, { SVC_TOKEN_VM: 'fake-vm-token' });
    expect(Object.keys(plan.byType).sort()).toEqual(['Drive', 'VM']);
    expect(plan.authMode).toBe('per-type');
  });

  it('treats an empty environment variable as absent', () => {
    const plan = resolveTokens({ token: 'fake-flag-all' }, { SVC_TOKEN: '' });
    expect(plan.byType.Team?.source).toBe('--token');
  });

  it('refuses to run without any token', () => {
    expect(() => resolveTokens({}, {})).toThrow(UsageError);
    expect(() => resolveTokens({}, {})).toThrow(/SVC_TOKEN/);
  });

  it('refuses a token with a trailing newline without echoing it', () => {
    let message = '';
    try {
      resolveTokens({}, { SVC_TOKEN: 'fake-secret-value\n' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/SVC_TOKEN/);
    expect(message).not.toContain('fake-secret-value');
  });

  it('registers every token so that messages are redacted', () => {
    resolveTokens({ token: 'fake-flag-secret' }, {});
    expect(redact('oops fake-flag-secret leaked')).toBe('oops [redacted] leaked');
  });
});

describe('base URL rules', () => {
  it.each([
    ['https://platform.example.org', 'https://platform.example.org'],
    ['https://platform.example.org/', 'https://platform.example.org'],
    ['https://platform.example.org/api', 'https://platform.example.org'],
    ['https://platform.example.org/api/', 'https://platform.example.org'],
    ['https://platform.example.org:8443/prefix/api', 'https://platform.example.org:8443/prefix'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.5.6.7', 'http://127.5.6.7'],
    ['http://localhost:3000/api', 'http://localhost:3000'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ])('accepts %s as %s', (raw, expected) => {
    expect(normaliseServiceUrl(raw, '--base-url', true)).toBe(expected);
  });

  it.each([
    ['http://platform.example.org', /unencrypted/],
    ['http://10.0.0.1', /unencrypted/],
    ['http://127.0.0.1.example.org', /unencrypted/],
    ['ftp://platform.example.org', /https:\/\//],
    ['platform.example.org', /not a URL/],
    ['https://user:pw@platform.example.org', /user name or password/],
    ['https://platform.example.org/?token=x', /query string/],
  ])('refuses %s', (raw, pattern) => {
    expect(() => normaliseServiceUrl(raw, '--base-url', true)).toThrow(pattern);
    expect(() => normaliseServiceUrl(raw, '--base-url', true)).toThrow(UsageError);
  });

  it('knows the loopback hosts', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });
});

describe('connection settings', () => {
  const env = { SVC_TOKEN: 'fake-token', SVC_BASE_URL: 'https://env.example.org' };

  it('lets --base-url win over SVC_BASE_URL and applies the defaults', () => {
    const s = resolveConnection({ baseUrl: 'https://flag.example.org/api' }, env);
    expect(s.baseUrl).toBe('https://flag.example.org');
    expect(s.timeoutMs).toBe(30_000);
    expect(s.concurrency).toBe(6);
    expect(s.retries).toBe(3);
    expect(s.realms).toEqual(['libvirt']);
    expect(s.ca).toBeUndefined();
  });

  it('requires a base URL', () => {
    expect(() => resolveConnection({}, { SVC_TOKEN: 'fake-token' })).toThrow(/no base URL/);
  });

  it.each([
    ['timeout', '0'],
    ['timeout', '-1'],
    ['timeout', 'abc'],
    ['timeout', ''],
    ['concurrency', '0'],
    ['concurrency', '2.5'],
    ['concurrency', '-3'],
    ['concurrency', 'many'],
    ['retries', '-1'],
    ['retries', '1.5'],
    ['retries', 'x'],
  ])('rejects --%s %s', (flag, value) => {
    expect(() => resolveConnection({ [flag]: value }, env)).toThrow(new RegExp(`--${flag}`));
  });

  it('accepts zero retries and fractional timeouts', () => {
    const s = resolveConnection({ retries: '0', timeout: '0.5' }, env);
    expect(s.retries).toBe(0);
    expect(s.timeoutMs).toBe(500);
  });

  it('refuses a missing or non-PEM --ca-file', () => {
    const dir = tmpDir('svc-ca-');
    expect(() => resolveConnection({ caFile: join(dir, 'missing.pem') }, env)).toThrow(/cannot be read/);
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
    expect(() => resolveConnection({ caFile: join(dir, 'junk.pem') }, env)).toThrow(/no PEM certificate/);
  });

  it('parses realm lists', () => {
    expect(parseRealms('a, b,,a')).toEqual(['a', 'b']);
    expect(() => parseRealms(' , ')).toThrow(UsageError);
  });
});
