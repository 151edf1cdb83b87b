import { getResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { auditRoute } from '../../src/audit/catalog.js';
import * as m from '../../src/audit/models.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { isSpreadsheet } from '../../src/audit/fetch.js';
import { AUDIT_TOKEN_PATTERN } from '../../src/config/values.js';

// The fake is written from the spec, not from the models: parsing its answers
// with the models checks both.
const ORIGIN = 'https://audit.test';

async function call(
  backend: ReturnType<typeof createAuditBackend>,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown } = {},
) {
  const token = opts.token === undefined ? FAKE_AUDIT_TOKEN : opts.token;
  const headers: Record<string, string> = token ? { 'x-access-token': token } : {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await getResponse(
    backend.handlers,
    new Request(ORIGIN + path, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    }),
  );
  if (!res) throw new Error(`no handler for ${method} ${path}`);
  return res;
}

describe('the fake audit service', () => {
  it('uses obviously fake tokens of the documented shape', () => {
    expect(FAKE_AUDIT_TOKEN).toMatch(AUDIT_TOKEN_PATTERN);
  });

  it('answers every list route with records the models accept', async () => {
    const backend = createAuditBackend();
    for (const id of ['queries-params', 'tags-list', 'queries-list', 'reports-list', 'alerts'] as const) {
      const def = auditRoute(id);
      const path = def.path.replace('{from}', '1970-01-01').replace('{to}', '2037-12-31');
      const body = await (await call(backend, 'GET', path)).json();
      expect(z.array(def.item!).safeParse(body).success, id).toBe(true);
    }
    expect(m.AuditInfo.parse(await (await call(backend, 'GET', '/info', { token: null })).json()).version).toBe(
      '4.2.0-fake',
    );
    const types = m.AlertTypeMap.parse(await (await call(backend, 'GET', '/alerts/list')).json());
    expect(Object.keys(types).length).toBe(5);
  });

  it('filters alerts by the dates in the path', async () => {
    const backend = createAuditBackend();
    const alerts = z
      .array(m.AlertRecord)
      .parse(await (await call(backend, 'GET', '/alerts/2026-11-01/2026-11-10')).json());
    expect(alerts.map((a) => a.date)).toEqual(['2026-11-03', '2026-11-05', '2026-11-08']);
  });

  it('requires the token on every route but /info, and logs requests without token values', async () => {
    const backend = createAuditBackend();
    expect((await call(backend, 'GET', '/tags/list', { token: null })).status).toBe(401);
    expect((await call(backend, 'GET', '/tags/list', { token: 'AAAAAAAAAAAAAAAAAAAAAA==' })).status).toBe(401);
    expect((await call(backend, 'GET', '/info', { token: null })).status).toBe(200);
    expect(backend.requests.map((r) => r.token)).toEqual(['none', 'invalid', 'none']);
    expect(JSON.stringify(backend.requests)).not.toContain('AAAAAAAAAAAAAAAAAAAAAA==');
  });

  it('checks query bodies by the declared parameter types', async () => {
    const backend = createAuditBackend();
    const ok = await call(backend, 'POST', '/queries/logins/2037-12-31', {
      body: { startDate: '2026-11-01', endDate: '2026-11-30', user: 'alice', limit: 2 },
    });
    expect(z.array(m.QueryRow).parse(await ok.json())).toEqual([
      ['2026-11-02', 'alice', 6],
      ['2026-11-20', 'alice', 2],
    ]);
    const bad = await call(backend, 'POST', '/queries/logins/2037-12-31', {
      body: { startDate: '2026-11-01', endDate: '2026-11-30', user: 'alice', limit: '2' },
    });
    expect(bad.status).toBe(400);
    const missing = await call(backend, 'POST', '/queries/logins/2037-12-31', { body: {} });
    expect(missing.status).toBe(400);
  });

  it('looks up objects, all of them for an empty list', async () => {
    const backend = createAuditBackend();
    const all = z
      .array(m.LookedUpObject)
      .parse(await (await call(backend, 'POST', '/objects/user/2037-12-31', { body: [] })).json());
    expect(all.length).toBe(4);
    const one = await (await call(backend, 'POST', '/objects/vm/2037-12-31', { body: ['vm-02'] })).json();
    expect(one).toEqual([{ id: 'vm-02', owner: 'bob', cores: 2 }]);
  });

  it('serves spreadsheets, needs the object of an object report, and can answer JSON instead', async () => {
    const backend = createAuditBackend({ faults: { reportAsJson: ['vm-inventory'] } });
    const xlsx = await call(backend, 'GET', '/reports/user-activity/1970-01-01/2037-12-31/alice');
    expect(isSpreadsheet(Buffer.from(await xlsx.arrayBuffer()))).toBe(true);
    expect((await call(backend, 'GET', '/reports/user-activity/1970-01-01/2037-12-31')).status).toBe(400);
    const json = await call(backend, 'GET', '/reports/vm-inventory/1970-01-01/2037-12-31');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ error: 'report engine unavailable', report: 'vm-inventory' });
  });
});
