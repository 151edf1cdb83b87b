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
 * Name recordings to make only those:
 *
 *   node --import tsx scripts/record-platform.ts platform-3.14.1-night2
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
import type { CollectionManifest } from '../src/collect/manifest.js';
import { plainReporter } from '../src/progress/reporter.js';
import { startFakeSite } from '../test/helpers/fake-site.js';
import { PER_TYPE_TOKENS, perTypeTokenEnv } from '../test/fake/backend.js';
import { generateDataset, type Dataset } from '../test/fake/dataset.js';
import type { FakeSiteOptions } from '../test/helpers/fake-site.js';

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
