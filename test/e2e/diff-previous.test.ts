import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** A replay of a shipped recording, its manifest's time (and site) then set as given. */
async function replayInto(dir: string, recording: string, time?: string, baseUrl?: string) {
  const res = await runCli(['--replay', join(REPO_ROOT, 'recordings', recording), '--out-dir', dir, '--quiet']);
  expect(res.code).toBe(0);
  if (time || baseUrl) {
    const file = join(dir, '_snapshot-manifest.json');
    const m = JSON.parse(readFileSync(file, 'utf8'));
    if (time) m.time = time;
    if (baseUrl) m.baseUrl = baseUrl;
    writeFileSync(file, JSON.stringify(m, null, 2));
  }
}

/** A copy of a shipped recording as if collected from `baseUrl` (at `time`): the collection manifest covers its files, not itself. */
function recordingOf(recording: string, baseUrl: string, time?: string): string {
  const dir = join(tmpDir(), recording);
  cpSync(join(REPO_ROOT, 'recordings', recording), dir, { recursive: true });
  const file = join(dir, '_collection-manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.baseUrl = baseUrl;
  if (time) m.time = time;
  writeFileSync(file, JSON.stringify(m, null, 2));
  return dir;
}

const previousNight = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, '_findings.json'), 'utf8')) as { previous?: unknown }).previous;

describe('snapshot --diff-previous', () => {
  it('compares the new snapshot with the newest older one beside it, and still exits 0', async () => {
    const parent = tmpDir();
    // Of the fake site, as the live run's: only a snapshot of the same site is compared with.
    await replayInto(join(parent, 'svc-snapshot-2026-11-19'), 'platform-3.13.8', '2026-11-19T02:00:00.000Z', site.url);
    await replayInto(join(parent, 'svc-snapshot-2026-11-21'), 'platform-3.14.1', undefined, site.url);
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

  it('in text, names users and teams as `diff` text does: the same lines for the same two nights', async () => {
    const parent = tmpDir();
    const night = (n: number) => join(REPO_ROOT, 'recordings', `platform-3.14.1-night${n}`);
    expect((await runCli(['--replay', night(2), '--out-dir', join(parent, 'n2'), '--quiet'])).code).toBe(0);
    const res = await runCli(['--replay', night(3), '--out-dir', join(parent, 'n3'), '--diff-previous']);
    expect(res.code, res.stderr).toBe(0);
    const diff = await runCli(['diff', join(parent, 'n2'), join(parent, 'n3')]);
    const changes = res.stdout.slice(res.stdout.lastIndexOf('\n', res.stdout.indexOf(' exports changed')) + 1);
    expect(changes).toContain('user="Quinn Rossi"');
    expect(changes).toBe(diff.stdout);
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

  it('compares with the newest older snapshot of the same site, passing over newer ones of another site in the parent', async () => {
    const parent = tmpDir();
    const b = 'https://b.example.org';
    const run = (recording: string, name: string, ...extra: string[]) =>
      runCli([
        '--replay',
        recording,
        '--out-dir',
        join(parent, name),
        '--diff-previous',
        '--findings',
        '--json',
        ...extra,
      ]);
    const shipped = (name: string) => join(REPO_ROOT, 'recordings', name);
    // Site a's first night, then site b's, an hour later, into the same parent (one cron job per site).
    expect((await run(shipped('platform-3.14.1'), 'svc-snapshot-a-2026-11-21')).code).toBe(0);
    const bFirst = recordingOf('platform-3.13.8', b, '2026-11-21T03:00:00.000Z');
    const first = await run(bFirst, 'svc-snapshot-b-2026-11-21');
    expect(first.code, first.stderr).toBe(0);
    // A site's first night beside another site's snapshot: nothing compared, no finding told as new.
    expect(SnapshotSummary.parse(JSON.parse(first.stdout)).diffPrevious?.previous).toBeNull();
    expect(first.stderr).toContain(
      `--diff-previous: no older snapshot of ${b} beside ${join(parent, 'svc-snapshot-b-2026-11-21')} ` +
        '(the newest older one, svc-snapshot-a-2026-11-21, is of https://platform.example.org)',
    );
    expect(previousNight(join(parent, 'svc-snapshot-b-2026-11-21'))).toBeUndefined();

    // Site a's second night: compared with its own first night, not with b's newer one.
    const second = await run(shipped('platform-3.14.1-night2'), 'svc-snapshot-a-2026-11-22');
    expect(second.code, second.stderr).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(second.stdout));
    expect(summary.diffPrevious?.previous).toBe(join(parent, 'svc-snapshot-a-2026-11-21'));
    expect(second.stderr).toContain(
      `--diff-previous: the newest older snapshot beside, svc-snapshot-b-2026-11-21, is of ${b}; ` +
        `compared with ${join(parent, 'svc-snapshot-a-2026-11-21')} instead`,
    );
    expect(previousNight(join(parent, 'svc-snapshot-a-2026-11-22'))).toEqual({
      time: '2026-11-21T02:00:00.000Z',
      source: 'snapshot',
    });

    // Site b's second night, its base URL written with a trailing slash: the same site, past a's newer night; quiet.
    const third = await run(recordingOf('platform-3.14.1-night3', `${b}/`), 'svc-snapshot-b-2026-11-23', '--quiet');
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toBe('');
    expect(SnapshotSummary.parse(JSON.parse(third.stdout)).diffPrevious?.previous).toBe(
      join(parent, 'svc-snapshot-b-2026-11-21'),
    );
    expect(previousNight(join(parent, 'svc-snapshot-b-2026-11-23'))).toEqual({
      time: '2026-11-21T03:00:00.000Z',
      source: 'snapshot',
    });
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
