import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite, type FakeSiteOptions } from '../helpers/fake-site.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';
import { SnapshotManifestSchema } from '../../src/manifests.js';
import { SnapshotSummary } from '../../src/summaries/schemas.js';

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each([
  [
    '3.14.1',
    {
      realms: [
        { id: 'libvirt', driver: 'libvirt' },
        { id: 'altvirt', driver: 'altvirt' },
      ],
    },
    { SVC_TOKEN: ALL_TYPES_TOKEN.value },
  ],
  ['3.13.8', { release: '3.13.8', tokens: PER_TYPE_TOKENS }, perTypeTokenEnv()],
] as const)('a live snapshot of a %s backend', (_release, siteOptions, env) => {
  it('records the sha256 of every export file in its manifest and its --json summary, and replays to the same hashes', async () => {
    site = await startFakeSite(siteOptions as FakeSiteOptions);
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--raw', '--json'], {
      env: { ...env },
    });
    expect(res.code).toBe(0);
    const manifest = SnapshotManifestSchema.parse(
      JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')),
    );
    expect(manifest.exports).toHaveLength(15);
    for (const e of manifest.exports) expect(e.sha256, e.file).toBe(sha256(readFileSync(join(out, e.file))));
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.exports.map((e) => e.sha256)).toEqual(manifest.exports.map((e) => e.sha256));

    const replay = join(parent, 'replay');
    expect((await runCli(['--replay', join(out, 'raw'), '--out-dir', replay, '--quiet'])).code).toBe(0);
    const again = SnapshotManifestSchema.parse(
      JSON.parse(readFileSync(join(replay, '_snapshot-manifest.json'), 'utf8')),
    );
    expect(again.exports.map((e) => e.sha256)).toEqual(manifest.exports.map((e) => e.sha256));
  });
});
