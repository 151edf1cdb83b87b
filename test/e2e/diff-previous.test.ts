import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { SnapshotSummary } from '../../src/summaries/schemas.js';

let site: FakeSite;
beforeAll(async () => {
  site = await startFakeSite({ seed: 2026 });
});
afterAll(async () => site.close());

async function replayInto(dir: string, recording: string, time?: string) {
  const res = await runCli(['--replay', join(REPO_ROOT, 'recordings', recording), '--out-dir', dir, '--quiet']);
  expect(res.code).toBe(0);
  if (time) {
    const file = join(dir, '_snapshot-manifest.json');
    const m = JSON.parse(readFileSync(file, 'utf8'));
    m.time = time;
    writeFileSync(file, JSON.stringify(m, null, 2));
  }
}

describe('snapshot --diff-previous', () => {
  it('compares the new snapshot with the newest older one beside it, and still exits 0', async () => {
    const parent = tmpDir();
    await replayInto(join(parent, 'svc-snapshot-2026-11-19'), 'platform-3.13.8', '2026-11-19T02:00:00.000Z');
    await replayInto(join(parent, 'svc-snapshot-2026-11-21'), 'platform-3.14.1');
    mkdirSync(join(parent, 'svc-snapshot-raw-2026-11-21')); // a decoy without a snapshot manifest
    const res = await runCli(
      [
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--out-dir',
        join(parent, 'svc-snapshot-today'),
        '--diff-previous',
        '--json',
      ],
      {
        env: { SVC_TOKEN: ALL_TYPES_TOKEN.value },
      },
    );
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.diffPrevious?.previous).toBe(join(parent, 'svc-snapshot-2026-11-21'));
    expect(summary.diffPrevious?.changed).toBe(true);
    expect(summary.diffPrevious?.exports.length).toBeGreaterThan(0);
  });

  it('with --format html, says the same changes as without it (the comparison the page shows is the one --diff-previous reports)', async () => {
    const summaries: Array<SnapshotSummary['diffPrevious']> = [];
    for (const extra of [[], ['--format', 'html']]) {
      const parent = tmpDir();
      await replayInto(join(parent, 'svc-snapshot-2026-11-21'), 'platform-3.14.1');
      const res = await runCli([
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1-night2'),
        '--out-dir',
        join(parent, 'svc-snapshot-2026-11-22'),
        '--diff-previous',
        '--json',
        ...extra,
      ]);
      expect(res.code, res.stderr).toBe(0);
      const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
      expect(summary.diffPrevious?.previous).toBe(join(parent, 'svc-snapshot-2026-11-21'));
      summaries.push(summary.diffPrevious);
    }
    expect(summaries[0]?.changed).toBe(true);
    expect({ ...summaries[1], previous: '' }).toEqual({ ...summaries[0], previous: '' });
  });

  it('says so when there is no older snapshot', async () => {
    const parent = tmpDir();
    const res = await runCli([
      '--replay',
      join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
      '--out-dir',
      join(parent, 'svc-snapshot-2026-11-21'),
      '--diff-previous',
    ]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/No older snapshot beside/);
  });
});
