/**
 * The collector's parts on their own: planning is pure (the realm list from
 * the realms route's outcome), and the runner stops on a refused token
 * before any other failure, cancelling what is in flight.
 */
import { describe, expect, it } from 'vitest';
import { planRoute, REALMS_ROUTE, routeById, type PlannedRoute } from '../../src/api/catalog.js';
import type { RouteRecord } from '../../src/api/route-record.js';
import { decideRealms, planAfterRealms } from '../../src/collect/plan.js';
import { runRoutes } from '../../src/collect/runner.js';
import { FailedError, TokenRejectedError } from '../../src/errors.js';

const realmsRec = (over: Partial<RouteRecord>): RouteRecord => ({
  route: 'GET /api/realms',
  tokenType: 'VM',
  status: 200,
  file: 'api-realms.json',
  ...over,
});

describe('planning', () => {
  it('starts with GET /api/realms', () => {
    expect(planRoute(REALMS_ROUTE).label).toBe('GET /api/realms');
  });

  it("takes the backend's realm ids, once each, and says --realms was ignored when given", () => {
    const realm = (id: string, driver: string) => ({ id, name: `Realm ${id}`, driver });
    const body = {
      defaultRealm: 'libvirt',
      realms: { a: realm('libvirt', 'libvirt'), b: realm('libvirt', 'libvirt'), c: realm('alt', 'altvirt') },
    };
    const d = decideRealms(realmsRec({}), body, ['mine'], true);
    expect(d.realms).toEqual({ source: 'GET /api/realms', ids: ['libvirt', 'alt'] });
    expect(d.realmsFlagIgnored).toBe(true);
    expect(d.shapeError).toBeUndefined();
    expect(decideRealms(realmsRec({}), body, [], false).realmsFlagIgnored).toBe(false);
  });

  it('fails the route, with no realms, when the answer does not have the documented shape', () => {
    const d = decideRealms(realmsRec({}), { defaultRealm: 'x', realms: [1, 2] }, ['mine'], true);
    expect(d.realms.ids).toEqual([]);
    expect(d.shapeError).toMatch(/^the realms response does not have the documented shape \(realms/);
  });

  it('plans no per-realm route when the realms route failed, and uses --realms where the route is not served', () => {
    expect(
      decideRealms(realmsRec({ status: 500, file: null, error: 'HTTP 500' }), undefined, ['mine'], true).realms,
    ).toEqual({ source: 'GET /api/realms', ids: [] });
    const skipped = decideRealms(
      realmsRec({ status: 404, file: null, skipped: true, reason: 'x' }),
      undefined,
      ['r1', 'r2'],
      true,
    );
    expect(skipped).toEqual({ realms: { source: '--realms', ids: ['r1', 'r2'] }, realmsFlagIgnored: false });
    const labels = planAfterRealms(skipped.realms).map((p) => p.label);
    expect(labels).toContain('GET /api/vms/r1/active');
    expect(labels).toContain('GET /api/vms/r2/active');
    expect(labels).not.toContain('GET /api/realms');
  });
});

describe('the runner', () => {
  const plan: PlannedRoute[] = ['users', 'teams', 'drives', 'projects'].map((id) => planRoute(routeById(id)));

  it('returns every outcome in plan order, at most `concurrency` at once', async () => {
    let inFlight = 0;
    let most = 0;
    const got = await runRoutes(plan, 2, new AbortController(), async (p) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return p.label;
    });
    expect(got).toEqual(plan.map((p) => p.label));
    expect(most).toBe(2);
  });

  it('stops with a refused token before any other failure, and cancels what is in flight', async () => {
    const abort = new AbortController();
    const refused = new TokenRejectedError('401 on GET /api/drives');
    const run = runRoutes(plan, 4, abort, async (p) => {
      if (p.label === 'GET /api/users') throw new FailedError('something else');
      if (p.label === 'GET /api/drives') {
        await new Promise((r) => setTimeout(r, 5));
        throw refused;
      }
      await new Promise((r) => setTimeout(r, 20));
      return p.label;
    });
    await expect(run).rejects.toBe(refused);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(refused);
  });
});
