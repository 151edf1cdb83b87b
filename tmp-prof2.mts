import { generateDataset, LARGE_SITE, LARGE_SITE_REALMS } from './test/fake/dataset.ts';
import { CollectionBuilder, parsedBodies } from './test/unit/collection-builder.ts';
import { build } from './src/exports/build.ts';
const ds = generateDataset({ sizes: LARGE_SITE, realms: LARGE_SITE_REALMS });
const b = new CollectionBuilder({ realms: ds.realmSpecs.map(r => r.id) });
b.with('users', ds.users).with('teams', ds.teams).with('teams-usage', ds.teamUsage).with('drives', ds.drives).with('projects', ds.projects)
 .with('projects-memberships', ds.projectMemberships).with('projects-usage', ds.projectUsage).with('security-requirements', ds.securityRequirements)
 .with('security-levels', ds.securityLevels).with('users-certifications', ds.userCertifications).with('users-managed-objects', ds.managedObjects)
 .with('vms-bricks', ds.bricks).with('external-servers', ds.externalServers);
for (const [realm, d] of ds.perRealm) { b.with('vms-images', d.images, realm); b.with('vms-configs', d.configs, realm); b.with('vms-active', d.activeVms, realm); }
const c = b.build();
const parsed = parsedBodies(c);
const { Session } = await import('node:inspector/promises');
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start');
const t = performance.now(); build(c, parsed); console.log('build', performance.now() - t);
const { profile } = await s.post('Profiler.stop') as any;
const self = new Map<string, number>();
const dt = profile.timeDeltas as number[]; const samples = profile.samples as number[];
const nodes = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
for (let i = 0; i < samples.length; i++) { const n = nodes.get(samples[i]!)!; const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(6)}ms ${k}`).join('\n'));
