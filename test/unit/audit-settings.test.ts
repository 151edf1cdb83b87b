import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseParams, parseReports, resolveAuditSettings as settingsOf } from '../../src/audit/settings.js';
import { parseCalendarDate } from '../../src/config/values.js';
import { readOptions } from '../../src/config/options.js';

type AuditFlags = Record<string, unknown>;
const resolveAuditSettings = (flags: AuditFlags, env: NodeJS.ProcessEnv) =>
  settingsOf(readOptions('audit', flags, env), env);

const TOKEN = 'FakeAuditToken00000000==';
const URL = 'https://audit.example.org';

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

const resolve = (flags: AuditFlags, env: NodeJS.ProcessEnv = { SVC_AUDIT_TOKEN: TOKEN }) =>
  resolveAuditSettings({ auditUrl: URL, ...flags }, env);

describe('audit settings', () => {
  it('defaults the period to the spec\'s "all data" dates', () => {
    const s = resolve({});
    expect(s).toMatchObject({ auditUrl: URL, from: '1970-01-01', to: '2037-12-31', queries: [], reports: [] });
    expect(s.token).toEqual({ value: TOKEN, source: 'SVC_AUDIT_TOKEN' });
  });

  it('takes the URL from SVC_AUDIT_URL, keeps a path prefix and strips only a trailing slash', () => {
    expect(
      resolveAuditSettings({}, { SVC_AUDIT_URL: 'https://h.example.org/audit/api/', SVC_AUDIT_TOKEN: TOKEN }).auditUrl,
    ).toBe('https://h.example.org/audit/api');
    expect(resolve({ auditUrl: 'http://127.0.0.1:8080' }).auditUrl).toBe('http://127.0.0.1:8080');
    expect(usage(() => resolve({ auditUrl: 'http://audit.example.org' })).message).toContain('https://');
    expect(usage(() => resolveAuditSettings({}, { SVC_AUDIT_TOKEN: TOKEN })).message).toContain('--audit-url');
  });

  it('lets SVC_AUDIT_TOKEN win over --audit-token', () => {
    const s = resolve({ auditToken: 'FlagAuditToken00000000==' });
    expect(s.token.source).toBe('SVC_AUDIT_TOKEN');
    expect(resolve({ auditToken: 'FlagAuditToken00000000==' }, {}).token).toEqual({
      value: 'FlagAuditToken00000000==',
      source: '--audit-token',
    });
  });

  it('refuses a missing or malformed token without echoing it', () => {
    expect(usage(() => resolve({}, {})).message).toContain('SVC_AUDIT_TOKEN');
    for (const bad of [
      'FakeAuditToken0000000==',
      'FakeAuditToken000000000=',
      'Fake+uditToken00000000==',
      `${TOKEN} `,
      `"${TOKEN}"`,
    ]) {
      const err = usage(() => resolve({}, { SVC_AUDIT_TOKEN: bad }));
      expect(err.message).not.toContain(bad);
      expect(err.message).not.toContain(bad.slice(0, 10));
    }
  });

  it('accepts only real calendar dates', () => {
    expect(parseCalendarDate('--from', '2024-02-29')).toBe('2024-02-29');
    for (const bad of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-1-05', '26-01-05', '2026-01-05T00:00', '']) {
      expect(() => parseCalendarDate('--from', bad)).toThrow(UsageError);
    }
  });

  it('refuses a period that ends before it starts, and accepts a single day', () => {
    expect(usage(() => resolve({ from: '2026-11-02', to: '2026-11-01' })).message).toContain('after --to');
    expect(resolve({ from: '2026-11-01', to: '2026-11-01' }).from).toBe('2026-11-01');
  });

  it('parses --param at the first "=", the last repeat winning', () => {
    expect([...parseParams(['a=1', 'b=x=y', 'c=', 'a=2'])]).toEqual([
      ['a', '2'],
      ['b', 'x=y'],
      ['c', ''],
    ]);
    expect(usage(() => parseParams(['limit'])).message).toContain('name=value');
    expect(() => parseParams(['=1'])).toThrow(UsageError);
  });

  it('needs --query for --param', () => {
    expect(usage(() => resolve({ param: ['limit=1'] })).message).toContain('--query');
  });

  it('parses --report id[:objectId] at the first ":" and drops duplicates', () => {
    expect(parseReports(['monthly', 'user:alice', 'user:a:b', 'monthly'])).toEqual([
      { id: 'monthly' },
      { id: 'user', objectId: 'alice' },
      { id: 'user', objectId: 'a:b' },
    ]);
    expect(() => parseReports([':x'])).toThrow(UsageError);
    expect(() => parseReports(['user:'])).toThrow(UsageError);
    expect(() => parseReports(['user:..'])).toThrow(UsageError);
  });
});
