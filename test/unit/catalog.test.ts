import { describe, expect, it } from 'vitest';
import { ROUTES, planRoute, planRoutes, realmFileComponent, routeById } from '../../src/api/catalog.js';

describe('the route catalog', () => {
  it('lists every GET route of the contract once, with its token type and release', () => {
    expect(ROUTES).toHaveLength(17);
    expect(new Set(ROUTES.map((r) => r.path)).size).toBe(17);
    expect(ROUTES.every((r) => r.method === 'GET')).toBe(true);
    expect(ROUTES.filter((r) => r.since === '3.14.1')).toHaveLength(10);
    expect(routeById('users-certifications')).toMatchObject({
      tokenType: 'User',
      file: 'api-users-certifications.json',
    });
  });

  it('plans three routes per realm and the others once', () => {
    const plan = planRoutes(['libvirt', 'alt']);
    expect(plan).toHaveLength(13 + 6);
    expect(plan.map((p) => p.label)).toContain('GET /api/vms/images?realm=alt');
    expect(plan.find((p) => p.label === 'GET /api/vms/alt/configs')?.file).toBe('api-vms-alt-configs.json');
  });
});

describe('realm ids in file names and paths', () => {
  it.each([
    ['libvirt', 'libvirt'],
    ['realm-1.b_c', 'realm-1.b_c'],
    ['../../evil', '%2E%2E%2F%2E%2E%2Fevil'],
    ['a/b c', 'a%2Fb%20c'],
    ['.', '%2E'],
    ['..', '%2E%2E'],
    ['.hidden', '%2Ehidden'],
    ['a\\b', 'a%5Cb'],
    ['ünï', '%C3%BCn%C3%AF'],
  ])('writes %s as %s', (realm, expected) => {
    expect(realmFileComponent(realm)).toBe(expected);
    expect(realmFileComponent(realm)).not.toMatch(/[/\\]/);
  });

  it('keeps encoded names distinct from plain ones', () => {
    // A safe name never contains %, so an encoded id cannot collide with a plain one.
    expect(realmFileComponent('a%2Fb')).toBe('a%252Fb');
    expect(realmFileComponent('a/b')).toBe('a%2Fb');
  });

  it('sends dot-only realm ids percent-encoded so that no URL parser resolves them away', () => {
    expect(planRoute(routeById('vms-active'), '..').urlPath).toBe('/api/vms/%2E%2E/active');
    expect(planRoute(routeById('vms-configs'), 'a/b c').urlPath).toBe('/api/vms/a%2Fb%20c/configs');
    expect(planRoute(routeById('vms-images'), 'a&b').urlPath).toBe('/api/vms/images?realm=a%26b');
  });
});
