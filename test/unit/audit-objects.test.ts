import { describe, expect, it } from 'vitest';
import { auditRoute, planAuditRoute } from '../../src/audit/catalog.js';
import { OBJECT_TYPE_PATTERN, parseObjects } from '../../src/audit/settings.js';
import { UsageError } from '../../src/errors.js';

describe('--objects', () => {
  it('splits the type from its ids at the first colon, ids at commas, duplicates dropped; no colon means all', () => {
    expect(parseObjects(['user:alice,bob,alice', 'vm', 'team-x:a:b'])).toEqual([
      { type: 'user', ids: ['alice', 'bob'] },
      { type: 'vm', ids: [] },
      { type: 'team-x', ids: ['a:b'] },
    ]);
    expect(parseObjects(undefined)).toEqual([]);
  });

  it.each(['', '../x', '..', '.', 'a/b', 'a\\b', '%2F', 'us er', 'é', 'user\u0000', '1user', 'x'.repeat(65), ':a'])(
    'refuses the type in %j as a usage error that does not echo control characters',
    (raw) => {
      let err: unknown;
      try {
        parseObjects([raw]);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(/is not a plain name/);
      expect((err as Error).message).not.toMatch(/[\u0000-\u001f]/);
    },
  );

  it('refuses empty ids and a type given twice (in any case)', () => {
    expect(() => parseObjects(['user:'])).toThrow(/an empty id/);
    expect(() => parseObjects(['user:a,'])).toThrow(/an empty id/);
    expect(() => parseObjects(['user:a', 'USER'])).toThrow(/give each type once/);
  });

  it('plans POST /objects/{Type}/{to} with a file name that holds no separator, whatever reaches the planner', () => {
    const p = planAuditRoute(auditRoute('objects'), { type: 'user', to: '2026-11-30' });
    expect([p.def.method, p.urlPath, p.file]).toEqual([
      'POST',
      '/objects/user/2026-11-30',
      'objects-user-2026-11-30.json',
    ]);
    // Defence in depth behind OBJECT_TYPE_PATTERN: the planner still makes a hostile type file-safe.
    const hostile = planAuditRoute(auditRoute('objects'), { type: '../../etc/passwd', to: '2026-11-30' });
    expect(hostile.file).not.toMatch(/[/\\]/);
    expect(OBJECT_TYPE_PATTERN.test('../../etc/passwd')).toBe(false);
  });
});
