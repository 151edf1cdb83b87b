import { generateDataset, LARGE_SITE, LARGE_SITE_REALMS } from './test/fake/dataset.ts';
import { CollectionBuilder, parsedBodies } from './test/unit/collection-builder.ts';
import { build } from './src/exports/build.ts';
import { serializeExport, exportFileName } from './src/exports/serialize.ts';
for (const [release, big] of [['3.14.1', false], ['3.13.8', false], ['3.14.1', true]] as const) {
  const ds = generateDataset({ release, ...(big ? { sizes: LARGE_SITE, realms: LARGE_SITE_REALMS } : {}) });
  const b = new CollectionBuilder({ release, realms: ds.realmSpecs.map(r => r.id) });
  const put = (id: string, recs: unknown[]) => { if (release === '3.14.1' || !['teams-usage','projects-memberships','projects-usage','security-requirements','security-levels','users-certifications','users-managed-objects','vms-bricks','external-servers'].includes(id)) b.with(id, recs); };
  put('users', ds.users); put('teams', ds.teams); put('teams-usage', ds.teamUsage); put('drives', ds.drives); put('projects', ds.projects);
  put('projects-memberships', ds.projectMemberships); put('projects-usage', ds.projectUsage); put('security-requirements', ds.securityRequirements);
  put('security-levels', ds.securityLevels); put('users-certifications', ds.userCertifications); put('users-managed-objects', ds.managedObjects);
  put('vms-bricks', ds.bricks); put('external-servers', ds.externalServers);
  for (const [realm, d] of ds.perRealm) { const rd = d as any; b.with('vms-images', rd.images, realm); b.with('vms-configs', rd.configs, realm); b.with('vms-active', rd.activeVms, realm); }
  const c = b.build();
  let bytes = 0; for (const v of c.bodies.values()) bytes += v.length;
  const t0 = performance.now();
  const r = build(c);
  const t1 = performance.now();
  let out = 0; for (const e of r.exports) out += serializeExport(e).length;
  const t2 = performance.now();
  console.log(release, big ? 'LARGE' : 'small', (bytes/1e6).toFixed(1)+'MB', 'build', (t1-t0).toFixed(0)+'ms', 'serialize', (t2-t1).toFixed(0)+'ms', (out/1e6).toFixed(1)+'MB');
  console.log(r.exports.map(e => `${exportFileName(e.export, e.records.length, c.manifest.date)}${e.available ? '' : ' UNAVAIL: ' + e.reason + ' / ' + e.proposedRoute}`).join('\n'));
  console.log(JSON.stringify(r.nullFields, null, 0));
  console.log(JSON.stringify(r.validation), JSON.stringify(r.drift));
  if (!big) { console.log(JSON.stringify(r.exports[1]!.records[0], null, 1)); console.log(JSON.stringify(r.exports[13]!.records[0]??null, null, 1)); }
  if (big) { const t3 = performance.now(); build(c, parsedBodies(c)); console.log('with parsed', (performance.now()-t3).toFixed(0)); }
  console.log(Object.keys(ds.perRealm.get(ds.realmSpecs[0]!.id) as any));
}
