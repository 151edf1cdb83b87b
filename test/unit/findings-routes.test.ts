/**
 * A partial run never loses findings silently (CONTRACT section 17): for
 * every rule and every route one of its input columns comes from (worked out
 * here from the rule declarations and the export catalog, not listed by
 * hand), the third night is built with that route failed (a per-realm route
 * in one realm of the two, the others read), and the rule is not evaluated,
 * with a reason naming the route; every rule that does not depend on it is
 * still evaluated.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { planRoute, routeById } from '../../src/api/catalog.js';
import { readCollection } from '../../src/collect/replay.js';
import type { RawCollection } from '../../src/collect/types.js';
import { buildAll } from '../../src/exports/build.js';
import { CATALOG } from '../../src/exports/catalog.js';
import { RULES } from '../../src/findings/catalog.js';
import type { RuleDef } from '../../src/findings/define.js';
import { evaluateFindings, type FindingsReport } from '../../src/findings/evaluate.js';

const NIGHT3 = fileURLToPath(new URL('../../recordings/platform-3.14.1-night3', import.meta.url));

/** The catalog routes a rule's declared columns are read from: a field's export route, or the route its join or count reads. */
function routesOf(rule: RuleDef): Set<string> {
  const out = new Set<string>();
  for (const input of rule.reads) {
    const def = CATALOG.find((e) => e.name === input.export)!;
    for (const name of input.columns) {
      const source = def.columns.find((c) => c.name === name)!.source;
      out.add(source.kind === 'join' || source.kind === 'count' ? source.route : def.route);
    }
  }
  return out;
}

/** The collection with one planned route (one realm's, for a per-realm route) failed as a collector records a failure. */
function withFailed(c: RawCollection, label: string): RawCollection {
  const bodies = new Map(c.bodies);
  bodies.delete(label);
  const routes = c.manifest.routes.map((r) =>
    r.route === label
      ? {
          route: r.route,
          tokenType: r.tokenType,
          status: 503,
          file: null,
          attempts: 4,
          error: 'HTTP 503 Service Unavailable',
        }
      : r,
  );
  return { manifest: { ...c.manifest, routes }, bodies };
}

/** What a snapshot built from the collection gives the rules (--include vms, so that every optional input is held). */
function findingsOf(c: RawCollection): Promise<FindingsReport> {
  const built = buildAll(c, ['vms']);
  const manifest = {
    time: c.manifest.time,
    exports: built.exports.map((e) => ({
      export: e.export,
      available: e.available,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
    })),
    nullFields: built.nullFields,
  };
  const records = new Map(built.exports.map((e) => [e.export, e.records]));
  return evaluateFindings(manifest, async (name) => records.get(name)!);
}

let night3: RawCollection;
beforeAll(async () => {
  night3 = await readCollection(NIGHT3);
});

const dependencies = RULES.flatMap((rule) => [...routesOf(rule)].map((route) => ({ rule, route })));
const allRoutes = [...new Set(dependencies.map((d) => d.route))];

describe('a rule whose input a failed route leaves unavailable or incomplete', () => {
  it('every rule depends on at least one route, and the complete night evaluates every rule', async () => {
    for (const rule of RULES) expect(routesOf(rule).size, rule.id).toBeGreaterThan(0);
    const report = await findingsOf(night3);
    expect(report.rules.filter((r) => !r.evaluated)).toEqual([]);
  });

  const cases = allRoutes.flatMap((route) => {
    const def = routeById(route);
    // The recording's two realms: each failed alone, the other read.
    return def.perRealm
      ? ['libvirt', 'altvirt'].map((realm) => ({ route, label: planRoute(def, realm).label }))
      : [{ route, label: planRoute(def).label }];
  });

  it.each(cases)(
    '$label failed: every rule reading from it is not evaluated, naming it; every other rule is evaluated',
    async ({ route, label }) => {
      expect(
        night3.manifest.routes.some((r) => r.route === label && r.error === undefined && r.file !== null),
        `${label} is read in the recording`,
      ).toBe(true);
      const report = await findingsOf(withFailed(night3, label));
      for (const rule of RULES) {
        const result = report.rules.find((r) => r.id === rule.id)!;
        if (routesOf(rule).has(route)) {
          expect(result, `${rule.id} reads from ${label}`).toMatchObject({ evaluated: false, count: null });
          expect(result.reason, rule.id).toContain(`${label} failed: HTTP 503 Service Unavailable`);
          expect(
            report.findings.filter((f) => f.rule === rule.id),
            rule.id,
          ).toEqual([]);
        } else {
          expect(result, `${rule.id} does not read from ${label}`).toMatchObject({ evaluated: true });
        }
      }
    },
  );
});
