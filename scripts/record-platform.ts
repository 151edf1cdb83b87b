/**
 * Regenerates recordings/platform-3.14.1/ and recordings/platform-3.13.8/:
 * raw collections of small sites, made by the real collector (runCollect)
 * against the fake backend (test/fake/) over loopback HTTPS with the test CA.
 *
 *   node --import tsx scripts/record-platform.ts
 *
 * The run's clock is fixed (2026-11-21 02:00 local time) so names are stable.
 *
 * recordings/platform-3.14.1-night2/ is the next night of the 3.14.1 site
 * (clock 2026-11-22 02:00): the same generated dataset with the changes
 * NIGHT2_CHANGES makes (a user moved to another team, a drive grown, one
 * added and one deleted, a user deactivated, a VM config added), so that the
 * history has something to show between two nights (docs/history.md).
 * recordings/platform-3.14.1-night3/ (clock 2026-11-23 02:00) is night 2's
 * site with NIGHT3_CHANGES: a positive case of every findings rule the first
 * night lacks, each beside a negative one, and (auditorCases) those of the
 * rules' finer readings: vault files, legacy quotas, deleted owners, VMs
 * listed with `active` false, a duplicate membership row
 * (test/e2e/findings.test.ts).
 * Name recordings to make only those:
 *
 *   node --import tsx scripts/record-platform.ts platform-3.14.1-night3
 * Two manifest fields that change on every run are normalised afterwards, and
 * only those: `baseUrl` (the fake listens on a random port) becomes
 * https://platform.example.org, and `durationMs` becomes 0. Every body file is
 * byte for byte what the server sent, and matches the manifest's sha256.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCollect } from '../src/commands/collect.js';
import { COLLECTION_MANIFEST, toJsonFile } from '../src/collect/write.js';
import type { CollectionManifest } from '../src/manifests.js';
import { plainReporter } from '../src/progress/reporter.js';
import { startFakeSite } from '../test/helpers/fake-site.js';
import { PER_TYPE_TOKENS, perTypeTokenEnv } from '../test/fake/backend.js';
import { generateDataset, type Dataset } from '../test/fake/dataset.js';
import type { FakeSiteOptions } from '../test/helpers/fake-site.js';
import type { VirtualMachine } from '../src/api/models.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOW = new Date(2026, 10, 21, 2, 0, 0);

interface Recording {
  name: string;
  site: FakeSiteOptions;
  now?: Date;
  env: Record<string, string>;
  flags: Record<string, string>;
}

const SITE_3_14_1: FakeSiteOptions = { release: '3.14.1', seed: 2026, realms: [{ id: 'libvirt', driver: 'libvirt' }, { id: 'altvirt', driver: 'altvirt' }] };
const NIGHT2 = new Date(2026, 10, 22, 2, 0, 0);

/** The second night's changes to the 3.14.1 site, each on a record chosen by position (the dataset is deterministic for its seed). */
function NIGHT2_CHANGES(d: Dataset): Dataset {
  const at = NIGHT2.getTime();
  const [first, second] = d.teams;
  if (!first || !second || first.members.length < 2 || d.drives.length < 3 || d.users.length < 2) throw new Error('record-platform: the 3.14.1 site is smaller than NIGHT2_CHANGES expects');
  // A member of the first team moves to the second.
  const moved = first.members.shift()!;
  second.members.push({ ...moved, joined: at, modified: at });
  first.modified = at;
  second.modified = at;
  // A drive grows to twice its capacity; a new drive for the same owner; the last drive is deleted.
  const grown = d.drives[0]!;
  grown.capacity *= 2;
  grown.changed = at;
  d.drives.splice(1, 0, { ...d.drives[1]!, id: '9d3c8a52-5b1e-4c7f-8e2a-0f6b7d4e1a90', name: 'drive-13', created: at, changed: at, readers: [] });
  delete d.drives[1]!.writer;
  d.drives.pop();
  // The last user is deactivated.
  const user = d.users[d.users.length - 1]!;
  user.state = 'Disabled';
  user.stateReason = 'Deactivated (Admin)';
  user.deactivationType = 'Admin';
  // A VM config is added in the first realm, owned by the user who moved.
  const realm = d.perRealm.values().next().value;
  const template = realm?.configs[0];
  if (!realm || !template) throw new Error('record-platform: the 3.14.1 site has no VM config to copy');
  const { vmID: _running, ...stopped } = template;
  realm.configs.push({ ...stopped, rwDrives: [], roDrives: [], driveSlots: {}, id: '4f6e2d1c-8b7a-4c3e-9d5f-1a2b3c4d5e6f', name: 'vm-config-6', description: 'added on the second night', owners: [moved.id], state: 'Stopped' });
  return d;
}

const NIGHT3 = new Date(2026, 10, 23, 2, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The third night: the second night's site with a positive case of every
 * findings rule the first night lacks, each beside a negative one (the
 * certification expiring in 60 days, the membership expiring tomorrow, the
 * quota equal to the usage, the ended team that holds nothing...).
 */
function NIGHT3_CHANGES(d: Dataset): Dataset {
  const at = NIGHT3.getTime();
  const fail = (what: string): never => {
    throw new Error(`record-platform: the 3.14.1 site has no ${what} for NIGHT3_CHANGES`);
  };
  const levels = new Map(d.securityLevels.map((l) => [l.id, l]));
  const requirementIds = new Set(d.securityRequirements.map((r) => r.id));
  const held = new Set(d.userCertifications.map((c) => `${c.userID} ${c.requirementID}`));
  const levelled = new Set(d.projects.filter((p) => p.securityLevel !== undefined).map((p) => p.id));
  // Certifications for four required (user, requirement) pairs that hold none: expiring in 10 days,
  // later on the snapshot's day, exactly at its time (all three expiring), and in 60 days (not expiring).
  const missing: Array<{ userID: string; requirementID: string }> = [];
  for (const m of d.projectMemberships) {
    const level = levels.get(d.projects.find((p) => p.id === m.projectID)?.securityLevel ?? '');
    for (const requirementID of level?.requirements ?? []) {
      const k = `${m.userID} ${requirementID}`;
      if (!requirementIds.has(requirementID) || held.has(k)) continue;
      held.add(k);
      missing.push({ userID: m.userID, requirementID });
    }
  }
  const expiries = [at + 10 * DAY, at + 5 * HOUR, at, at + 60 * DAY];
  if (missing.length < expiries.length) fail('four members missing a certification');
  expiries.forEach((expires, i) => {
    const { userID, requirementID } = missing[i]!;
    d.userCertifications.push({ id: Buffer.from(`uc:night3:${i}`).toString('base64'), requirementID, userID, expires, created: at - DAY, modified: at - DAY, modifiedBy: userID });
  });
  // Memberships of projects without a level, each alone for its pair: one expired yesterday, one expires tomorrow.
  const pairCount = new Map<string, number>();
  for (const m of d.projectMemberships) pairCount.set(`${m.projectID} ${m.userID}`, (pairCount.get(`${m.projectID} ${m.userID}`) ?? 0) + 1);
  const plain = d.projectMemberships.filter((m) => !levelled.has(m.projectID) && pairCount.get(`${m.projectID} ${m.userID}`) === 1 && m.expires === undefined);
  if (plain.length < 2) fail('two memberships of projects without a level');
  plain[0]!.expires = at - DAY;
  plain[1]!.expires = at + DAY;
  // Users who are team members, with neither expiration nor deactivation: one expired yesterday (lapsed),
  // one expires tomorrow, one whose temporary deactivation ended yesterday (neither lapsed).
  const teamMembers = new Set(d.teams.flatMap((t) => t.members.map((m) => m.id)));
  const clean = d.users.filter((u) => teamMembers.has(u.id) && u.expiration === undefined && u.deactivationType === undefined);
  if (clean.length < 3) fail('three team members in good standing');
  clean[0]!.expiration = at - DAY;
  clean[1]!.expiration = at + DAY;
  clean[2]!.deactivationType = 'Timeout';
  clean[2]!.deactivatedUntil = at - DAY;
  // The site's teams by their usage rows: the first running VMs ends yesterday (ended with resources) and
  // gets a memory quota equal to its usage (not exceeded); the second ends tomorrow (not ended) and gets a
  // core quota one under its usage (exceeded); the team holding nothing ended yesterday (not reported).
  const usage = new Map(d.teamUsage.map((u) => [u.id, u]));
  const holds = (id: string) => (usage.get(id)?.vms?.cnt ?? 0) > 0 || (usage.get(id)?.drives?.cnt ?? 0) > 0;
  const withVms = d.teams.filter((t) => (usage.get(t.id)?.vms?.cores ?? 0) > 1 && (usage.get(t.id)?.vms?.mem ?? 0) > 0);
  const empty = d.teams.filter((t) => !holds(t.id));
  if (withVms.length < 2 || empty.length < 1) fail('two teams running VMs and one holding nothing');
  const [ended, over] = [withVms[0]!, withVms[1]!];
  ended.endDate = at - DAY;
  ended.teamQuotas = { ...ended.teamQuotas, memory: usage.get(ended.id)!.vms!.mem };
  delete ended.teamQuotas.cores;
  over.endDate = at + DAY;
  over.teamQuotas = { ...over.teamQuotas, cores: usage.get(over.id)!.vms!.cores - 1 };
  empty[0]!.endDate = at - DAY;
  // Two new users, members of nothing: one deactivated who still owns a running VM (lapsed with access, seen
  // with --include vms), one expiring tomorrow among that VM's authorized users (not lapsed).
  const vm = [...d.perRealm.values()].flatMap((r) => r.activeVms)[0] ?? fail('running VM');
  const template = d.users[0] ?? fail('user');
  const loner = (n: number, extra: Partial<typeof template>) => {
    const id = `0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b6${n}`;
    const u = { ...structuredClone(template), id, firstName: 'Night3', lastName: `Loner ${n}`, email: `night3-loner-${n}@example.test`, ...extra };
    d.users.push(u);
    return u;
  };
  const owner = loner(1, { deactivationType: 'Admin', expiration: undefined });
  const authed = loner(2, { expiration: at + DAY, deactivationType: undefined });
  vm.owner = owner.id;
  vm.ownerType = 'User';
  vm.authedUsers = [...vm.authedUsers, authed.id];
  // A level in use names a requirement the site does not list: reported, and skipped by the certification rules.
  const usedLevel = d.securityLevels.find((l) => d.projects.some((p) => p.securityLevel === l.id)) ?? fail('security level in use');
  usedLevel.requirements = [...usedLevel.requirements, 'sreq|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b70'];
  // The last project without a level names one the site does not list (its members are held to nothing).
  const bare = d.projects.filter((p) => p.securityLevel === undefined).pop() ?? fail('project without a level');
  bare.securityLevel = 'slvl|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b5a';
  return auditorCases(d, { at, fail, chosen: { ended, expired: clean[0]!, expiredMembership: plain[0]!, vm }, loner });
}

/**
 * The third night's cases of the rules as an auditor reads them (vault files
 * held, legacy quotas, deleted owners, VMs listed with `active` false, a
 * duplicate membership row), each positive beside a negative. The teams'
 * ended-with-files case needs no change: the team holding nothing but vault
 * files ended above.
 */
function auditorCases(
  d: Dataset,
  c: {
    at: number;
    fail: (what: string) => never;
    chosen: { ended: Dataset['teams'][number]; expired: Dataset['users'][number]; expiredMembership: Dataset['projectMemberships'][number]; vm: VirtualMachine };
    loner: (n: number, extra: Partial<Dataset['users'][number]>) => Dataset['users'][number];
  },
): Dataset {
  const { at, fail } = c;
  // An ended team whose usage row holds nothing at all, vault files included: not reported.
  d.teams.push({ id: 'team|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b80', name: 'Night3 Archive', desc: 'ended, holding nothing', created: at - 300 * DAY, modified: at - DAY, quotas: {}, settings: {}, endDate: at - DAY, members: [] });
  d.teamUsage.push({ id: 'team|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b80', exists: true, files: { cnt: 0, size: 0 } });
  // The ended team's legacy quotas: cores under its usage (teamQuotas sets no core limit: reported), memory under its usage too
  // (teamQuotas sets one, equal to the usage: not reported, the legacy entry is not read).
  const used = d.teamUsage.find((u) => u.id === c.chosen.ended.id)?.vms ?? fail('usage of the ended team');
  c.chosen.ended.quotas = { ...c.chosen.ended.quotas, cores: used.cores - 6, memory: used.mem - 1 };
  // Deleted projects beside the generated one (3 drives): one holding vault files only (reported), one holding nothing (not).
  d.projectUsage.splice(d.projectUsage.length - 1, 0, { id: 'proj|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b81', exists: false, files: { cnt: 12, size: 12 * 1024 * 1024 } }, { id: 'proj|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b82', exists: false, files: { cnt: 0, size: 0 }, drives: { cnt: 0, size: 0, used: 0 } });
  // The expired membership gets a second row, marked duplicate (also inherited), after it in key order: the detail names that row.
  const first = c.chosen.expiredMembership;
  const dup = { ...first, id: Buffer.from('pm:night3:dup').toString('base64'), duplicate: true, expires: at - 2 * DAY };
  if (!(first.id < dup.id)) fail('membership id before the duplicate row');
  d.projectMemberships.push(dup);
  // A running VM listed with active false: owned by a deactivated user who is a member of nothing (not reported: no access),
  // and authorizing the user expired yesterday (reported for the memberships; the detail counts that VM apart).
  const idle = [...d.perRealm.values()].flatMap((r) => r.activeVms).find((v) => v !== c.chosen.vm && v.active === false) ?? fail('running VM listed with active false');
  const idleOwner = c.loner(3, { deactivationType: 'Admin', expiration: undefined });
  idle.owner = idleOwner.id;
  idle.ownerType = 'User';
  idle.authedUsers = [...idle.authedUsers.filter((u) => u !== idleOwner.id), c.chosen.expired.id];
  return d;
}

const RECORDINGS: Recording[] = [
  {
    name: 'platform-3.14.1',
    site: SITE_3_14_1,
    env: { SVC_TOKEN: 'fake-token-all-types' },
    flags: {},
  },
  {
    name: 'platform-3.14.1-night2',
    site: { ...SITE_3_14_1, dataset: NIGHT2_CHANGES(generateDataset(SITE_3_14_1)) },
    now: NIGHT2,
    env: { SVC_TOKEN: 'fake-token-all-types' },
    flags: {},
  },
  {
    name: 'platform-3.14.1-night3',
    site: { ...SITE_3_14_1, dataset: NIGHT3_CHANGES(NIGHT2_CHANGES(generateDataset(SITE_3_14_1))) },
    now: NIGHT3,
    env: { SVC_TOKEN: 'fake-token-all-types' },
    flags: {},
  },
  {
    name: 'platform-3.13.8',
    site: {
      release: '3.13.8',
      seed: 2026,
      tokens: PER_TYPE_TOKENS,
    },
    env: perTypeTokenEnv(),
    flags: { realms: 'libvirt' },
  },
];

async function record(rec: Recording, work: string): Promise<void> {
  const site = await startFakeSite(rec.site);
  try {
    const out = path.join(work, rec.name);
    const result = await runCollect(
      { baseUrl: site.url, caFile: site.caFile, outDir: out, ...rec.flags },
      {
        env: rec.env,
        cwd: work,
        stdout: () => {},
        reporter: plainReporter((line) => process.stderr.write(line), true),
        now: () => rec.now ?? NOW,
      },
    );
    if (result.exitCode !== 0) throw new Error(`${rec.name}: collect ended with exit code ${result.exitCode}`);
    const file = path.join(out, COLLECTION_MANIFEST);
    const manifest = JSON.parse(await readFile(file, 'utf8')) as CollectionManifest;
    manifest.baseUrl = 'https://platform.example.org';
    for (const r of manifest.routes) if (r.durationMs !== undefined) r.durationMs = 0;
    await writeFile(file, toJsonFile(manifest));
    const target = path.join(ROOT, 'recordings', rec.name);
    await rm(target, { recursive: true, force: true });
    await cp(out, target, { recursive: true });
    process.stderr.write(`record-platform: wrote ${path.relative(ROOT, target)} (${manifest.routes.length} routes)\n`);
  } finally {
    await site.close();
  }
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'record-platform-'));
  try {
    const only = process.argv.slice(2);
    const unknown = only.filter((n) => !RECORDINGS.some((r) => r.name === n));
    if (unknown.length > 0) throw new Error(`no recording named ${unknown.join(', ')}; the recordings are ${RECORDINGS.map((r) => r.name).join(', ')}`);
    for (const rec of RECORDINGS) if (only.length === 0 || only.includes(rec.name)) await record(rec, work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`record-platform: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
