/**
 * Regenerates recordings/platform-3.14.1/ and recordings/platform-3.13.8/:
 * raw collections of small sites, made by the real collector (runCollect)
 * against the fake backend (test/fake/) over loopback HTTPS with the test CA.
 *
 *   node --import tsx scripts/record-platform.ts
 *
 * The run's clock is fixed (2026-11-21 02:00 local time) so names are stable.
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
import type { FakeSiteOptions } from '../test/helpers/fake-site.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOW = new Date(2026, 10, 21, 2, 0, 0);

interface Recording {
  name: string;
  site: FakeSiteOptions;
  env: Record<string, string>;
  flags: Record<string, string>;
}

const RECORDINGS: Recording[] = [
  {
    name: 'platform-3.14.1',
    site: { release: '3.14.1', seed: 2026, realms: [{ id: 'libvirt', driver: 'libvirt' }, { id: 'altvirt', driver: 'altvirt' }] },
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
        now: () => NOW,
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
    for (const rec of RECORDINGS) await record(rec, work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`record-platform: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
