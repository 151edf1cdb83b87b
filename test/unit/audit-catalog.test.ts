import { describe, expect, it } from 'vitest';
import { AUDIT_ROUTES, auditRoute, planAuditRoute } from '../../src/audit/catalog.js';
import { UsageError } from '../../src/errors.js';

describe('audit route catalog', () => {
  it('holds every route of the spec once, with /info the only one without a token', () => {
    expect(AUDIT_ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /info',
      'GET /queries/params',
      'GET /tags/list',
      'GET /queries/list',
      'GET /reports/list',
      'GET /alerts/list',
      'GET /alerts/{from}/{to}',
      'POST /objects/{type}/{to}',
      'POST /queries/{id}/{to}',
      'GET /reports/{id}/{from}/{to}',
      'GET /reports/{id}/{from}/{to}/{objectId}',
    ]);
    expect(AUDIT_ROUTES.filter((r) => r.auth === 'none').map((r) => r.id)).toEqual(['info']);
  });

  it("names each route's file as the contract does", () => {
    expect(AUDIT_ROUTES.map((r) => r.file)).toEqual([
      'info.json',
      'queries-params.json',
      'tags-list.json',
      'queries-list.json',
      'reports-list.json',
      'alerts-list.json',
      'alerts-{from}-{to}.json',
      'objects-{type}-{to}.json',
      'queries-{id}-{to}.json',
      'reports-{id}-{from}-{to}.xlsx',
      'reports-{id}-{from}-{to}-{objectId}.xlsx',
    ]);
  });

  it("plans the contract's file names", () => {
    expect(planAuditRoute(auditRoute('alerts'), { from: '2026-11-01', to: '2026-11-21' })).toMatchObject({
      label: 'GET /alerts/2026-11-01/2026-11-21',
      file: 'alerts-2026-11-01-2026-11-21.json',
    });
    expect(planAuditRoute(auditRoute('query'), { id: 'logins', to: '2037-12-31' })).toMatchObject({
      label: 'POST /queries/logins/2037-12-31',
      file: 'queries-logins-2037-12-31.json',
    });
    expect(
      planAuditRoute(auditRoute('report-object'), {
        id: 'user',
        from: '1970-01-01',
        to: '2037-12-31',
        objectId: 'alice',
      }).file,
    ).toBe('reports-user-1970-01-01-2037-12-31-alice.xlsx');
  });

  it('makes ids file-safe like realm ids and URL-encodes them in paths', () => {
    const p = planAuditRoute(auditRoute('report-object'), {
      id: '-r',
      from: '1970-01-01',
      to: '2037-12-31',
      objectId: '../a/b c',
    });
    expect(p.file).toBe('reports--r-1970-01-01-2037-12-31-%2E%2E%2Fa%2Fb%20c.xlsx');
    expect(p.file).not.toContain('/');
    expect(p.urlPath).toBe('/reports/-r/1970-01-01/2037-12-31/..%2Fa%2Fb%20c');
    expect(new URL(`https://h${p.urlPath}`).pathname).toBe(p.urlPath);
  });

  it('refuses "." and "..", which URL parsing would remove from the path', () => {
    for (const objectId of ['.', '..']) {
      expect(() =>
        planAuditRoute(auditRoute('report-object'), { id: 'r', from: '1970-01-01', to: '2037-12-31', objectId }),
      ).toThrow(UsageError);
    }
  });

  it('refuses to plan a route with a variable missing', () => {
    expect(() => planAuditRoute(auditRoute('alerts'), { from: '2026-11-01' })).toThrow(/needs \{to\}/);
  });
});
