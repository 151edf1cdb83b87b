import { generateDataset, LARGE_SITE, LARGE_SITE_REALMS } from './test/fake/dataset.ts';
import { CollectionBuilder, parsedBodies } from './test/unit/collection-builder.ts';
import { build } from './src/exports/build.ts';
import { ROUTES } from './src/api/catalog.ts';
import { driftTree, collectDrift } from './src/exports/schema.ts';
const ds = generateDataset({ sizes: LARGE_SITE, realms: LARGE_SITE_REALMS });
const b = new CollectionBuilder({ realms: ds.realmSpecs.map(r => r.id) });
b.with('users', ds.users).with('teams', ds.teams).with('teams-usage', ds.teamUsage).with('drives', ds.drives).with('projects', ds.projects)
 .with('projects-memberships', ds.projectMemberships).with('projects-usage', ds.projectUsage).with('security-requirements', ds.securityRequirements)
 .with('security-levels', ds.securityLevels).with('users-certifications', ds.userCertifications).with('users-managed-objects', ds.managedObjects)
 .with('vms-bricks', ds.bricks).with('external-servers', ds.externalServers);
for (const [realm, d] of ds.perRealm) { b.with('vms-images', d.images, realm); b.with('vms-configs', d.configs, realm); b.with('vms-active', d.activeVms, realm); }
const c = b.build();
let t = performance.now();
const lap = (s: string) => { const n = performance.now(); console.log(s, (n - t).toFixed(0)); t = n; };
const parsed = parsedBodies(c); lap('JSON.parse');
const byId = new Map(ROUTES.map(r => [r.id, r]));
for (const [label, v] of parsed) {
  const def = ROUTES.find(r => label.startsWith('GET ' + r.path.split('?')[0].replace('{realm}', '')) ) ;
}
let per: Record<string, number> = {};
for (const [label, v] of parsed) {
  if (!Array.isArray(v)) continue;
  const def = [...ROUTES].reverse().find(r => { const re = new RegExp('^GET ' + r.path.replace(/[?]/g, '\\?').replace('{realm}', '[^/]+') + '$'); return re.test(label); })!;
  const t0 = performance.now();
  for (const x of v) def.item.safeParse(x);
  per[def.id] = (per[def.id] ?? 0) + performance.now() - t0;
}
console.log(per); lap('safeParse');
for (const [label, v] of parsed) {
  if (!Array.isArray(v)) continue;
  const def = [...ROUTES].reverse().find(r => { const re = new RegExp('^GET ' + r.path.replace(/[?]/g, '\\?').replace('{realm}', '[^/]+') + '$'); return re.test(label); })!;
  const tree = driftTree(def.item)!; const out = new Set<string>();
  for (const x of v) collectDrift(tree, x, '', out);
}
lap('drift');
build(c, parsed); lap('build(parsed)');
build(c); lap('build()');
