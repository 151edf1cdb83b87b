import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets, leftovers } from '../helpers/assert-output.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { SnapshotSummary, CollectSummary } from '../../src/summaries/schemas.js';

// --keep end to end (CONTRACT section 12): the real binary against the HTTPS
// fake, in a directory that mixes complete, partial and foreign outputs.
const TOKEN = ALL_TYPES_TOKEN.value;
let site: FakeSite;
/** One complete snapshot and one complete raw collection, copied under dated names. */
let completeSnapshot: string;
let completeCollection: string;
let partialSnapshot: string;
let failedCollection: string;

beforeAll(async () => {
  site = await startFakeSite();
  const scratch = tmpDir();
  completeSnapshot = join(scratch, 'complete');
  completeCollection = join(scratch, 'raw');
  partialSnapshot = join(scratch, 'partial');
  failedCollection = join(scratch, 'failed-raw');
  const common = ['--base-url', site.url, '--ca-file', site.caFile, '--quiet'];
  expect(
    (await runCli(['snapshot', ...common, '--raw', '--out-dir', completeSnapshot], { env: { SVC_TOKEN: TOKEN } })).code,
  ).toBe(0);
  expect(
    (await runCli(['collect', ...common, '--out-dir', completeCollection], { env: { SVC_TOKEN: TOKEN } })).code,
  ).toBe(0);
  site.backend.setFault('drives', { statuses: [500], always: true });
  expect(
    (
      await runCli(['snapshot', ...common, '--retries', '0', '--allow-partial', '--out-dir', partialSnapshot], {
        env: { SVC_TOKEN: TOKEN },
      })
    ).code,
  ).toBe(4);
  expect(
    (
      await runCli(['collect', ...common, '--retries', '0', '--out-dir', failedCollection], {
        env: { SVC_TOKEN: TOKEN },
      })
    ).code,
  ).toBe(4);
  site.backend.clearFaults();
}, 300_000);
afterAll(async () => {
  await site.close();
});

function snapshot(parent: string, args: string[]) {
  return runCli(['snapshot', '--base-url', site.url, '--ca-file', site.caFile, '--retries', '0', ...args], {
    env: { SVC_TOKEN: TOKEN },
    cwd: parent,
  });
}

/** A directory of snapshots of every sort, and what each one is. */
function mixedParent(): string {
  const parent = tmpDir();
  const at = (name: string) => join(parent, name);
  for (const d of ['2026-01-01', '2026-01-02', '2026-01-05', '2026-01-09'])
    cpSync(completeSnapshot, at(`svc-snapshot-${d}`), { recursive: true });
  // Newer than every complete one, but partial: never counted, never deleted.
  cpSync(partialSnapshot, at('svc-snapshot-2026-01-10'), { recursive: true });
  // Complete, plus a file the tool did not write.
  cpSync(completeSnapshot, at('svc-snapshot-2026-01-03'), { recursive: true });
  writeFileSync(at('svc-snapshot-2026-01-03/notes.txt'), 'mine');
  // Complete, plus a file whose name would clear the terminal if printed raw.
  cpSync(completeSnapshot, at('svc-snapshot-2026-01-11'), { recursive: true });
  writeFileSync(at('svc-snapshot-2026-01-11/\u001b[2J\u001b[31mgotcha'), '');
  // Complete, but an export is a symbolic link to a file outside.
  cpSync(completeSnapshot, at('svc-snapshot-2026-01-04'), { recursive: true });
  const outside = at('outside.json');
  writeFileSync(outside, '[]');
  const exportFile = readdirSync(at('svc-snapshot-2026-01-04')).find((f) => f.includes('users ('))!;
  rmSync(at(`svc-snapshot-2026-01-04/${exportFile}`));
  symlinkSync(outside, at(`svc-snapshot-2026-01-04/${exportFile}`));
  // Its manifest is a symbolic link to a complete manifest.
  cpSync(completeSnapshot, at('svc-snapshot-2026-01-06'), { recursive: true });
  rmSync(at('svc-snapshot-2026-01-06/_snapshot-manifest.json'));
  symlinkSync(join(completeSnapshot, '_snapshot-manifest.json'), at('svc-snapshot-2026-01-06/_snapshot-manifest.json'));
  // A symbolic link to a complete snapshot elsewhere.
  const elsewhere = tmpDir();
  cpSync(completeSnapshot, join(elsewhere, 'target'), { recursive: true });
  symlinkSync(join(elsewhere, 'target'), at('svc-snapshot-2026-01-07'));
  // A plain file, a raw collection (another kind), and unrelated names.
  writeFileSync(at('svc-snapshot-2026-01-08'), 'not a directory');
  cpSync(completeCollection, at('svc-snapshot-raw-2026-01-01'), { recursive: true });
  mkdirSync(at('svc-snapshot-notes'));
  writeFileSync(at('svc-snapshot-notes/todo.txt'), 'x');
  cpSync(completeSnapshot, at('svc-snapshot-latest'), { recursive: true });
  return parent;
}

describe('--keep on snapshot', () => {
  it('deletes only older complete snapshots of this tool, keeping the newest n including the new one', async () => {
    const parent = mixedParent();
    const before = readdirSync(parent).sort();
    const res = await snapshot(parent, ['--keep', '3', '--out-dir', 'svc-snapshot-2026-02-01', '--json']);
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    // The new one, 01-09 and 01-05 stay; 01-02 and 01-01 go, oldest first.
    expect(summary.pruned).toEqual([join(parent, 'svc-snapshot-2026-01-01'), join(parent, 'svc-snapshot-2026-01-02')]);
    const after = readdirSync(parent).sort();
    expect(after).toEqual(
      [
        ...before.filter((n) => n !== 'svc-snapshot-2026-01-01' && n !== 'svc-snapshot-2026-01-02'),
        'svc-snapshot-2026-02-01',
      ].sort(),
    );
    // What was left is left whole, and what the links point to is untouched.
    expect(readFileSync(join(parent, 'svc-snapshot-2026-01-03/notes.txt'), 'utf8')).toBe('mine');
    expect(readFileSync(join(parent, 'outside.json'), 'utf8')).toBe('[]');
    expect(lstatSync(join(parent, 'svc-snapshot-2026-01-07')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(parent, 'svc-snapshot-2026-01-07/_snapshot-manifest.json'))).toBe(true);
    expect(readdirSync(join(parent, 'svc-snapshot-2026-01-10')).length).toBe(readdirSync(partialSnapshot).length);
    expect(leftovers(parent)).toEqual([]);
    // Every directory left alone is named on stderr with the reason, names escaped.
    expect(res.stderr).toContain(
      `--keep: left ${join(parent, 'svc-snapshot-2026-01-03')}: it holds notes.txt, which its manifest does not list`,
    );
    expect(res.stderr).toMatch(/--keep: left .*svc-snapshot-2026-01-10: it is a partial snapshot/);
    expect(res.stderr).toContain('holds \\u001b[2J\\u001b[31mgotcha');
    expect(res.stderr).not.toContain('\u001b');
    expectNoSecrets([TOKEN], [join(parent, 'svc-snapshot-2026-02-01')], [res.stdout, res.stderr]);
  });

  it('deletes an older snapshot whose report page was written after it by `report`', async () => {
    const parent = tmpDir();
    const older = join(parent, 'svc-snapshot-2026-01-01');
    cpSync(completeSnapshot, older, { recursive: true });
    const page = await runCli(['report', older]);
    expect(page.code, page.stderr).toBe(0);
    // The page is not in the manifest: the snapshot was published before it.
    expect(readdirSync(older).filter((f) => f.endsWith('.html'))).toHaveLength(1);
    const res = await snapshot(parent, ['--keep', '1', '--out-dir', join(parent, 'svc-snapshot-2026-02-01')]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toContain('--keep: left');
    expect(existsSync(older)).toBe(false);
  });

  it('with --keep 1 leaves only the new one of the complete snapshots, and lists the deletions in the text summary', async () => {
    const parent = mixedParent();
    const res = await snapshot(parent, ['--keep', '1', '--out-dir', join(parent, 'svc-snapshot-2026-02-01')]);
    expect(res.code).toBe(0);
    for (const d of ['01', '02', '05', '09']) {
      expect(existsSync(join(parent, `svc-snapshot-2026-01-${d}`))).toBe(false);
      expect(res.stdout).toContain(`deleted older ${join(parent, `svc-snapshot-2026-01-${d}`)}`);
    }
    for (const kept of ['03', '04', '06', '07', '08', '10'])
      expect(existsSync(join(parent, `svc-snapshot-2026-01-${kept}`)), kept).toBe(true);
    expect(existsSync(join(parent, 'svc-snapshot-raw-2026-01-01/_collection-manifest.json'))).toBe(true);
    expect(existsSync(join(parent, 'svc-snapshot-latest/_snapshot-manifest.json'))).toBe(true);
    expect(readFileSync(join(parent, 'svc-snapshot-notes/todo.txt'), 'utf8')).toBe('x');
  });

  it('never deletes a newer complete snapshot than the new one (a replay of an older collection)', async () => {
    const parent = mixedParent();
    const res = await runCli(
      [
        'snapshot',
        '--replay',
        join(completeSnapshot, 'raw'),
        '--keep',
        '1',
        '--out-dir',
        'svc-snapshot-2025-12-31',
        '--json',
      ],
      { cwd: parent },
    );
    expect(res.code).toBe(0);
    expect(SnapshotSummary.parse(JSON.parse(res.stdout)).pruned).toEqual(
      ['01', '02', '05'].map((d) => join(parent, `svc-snapshot-2026-01-${d}`)),
    );
    expect(existsSync(join(parent, 'svc-snapshot-2026-01-09/_snapshot-manifest.json'))).toBe(true);
    expect(existsSync(join(parent, 'svc-snapshot-2025-12-31/_snapshot-manifest.json'))).toBe(true);
  });

  it('deletes nothing after a partial run (--allow-partial, exit 4) or a failed one (exit 1)', async () => {
    const parent = mixedParent();
    const before = readdirSync(parent).sort();
    site.backend.setFault('drives', { statuses: [500], always: true });
    try {
      const partial = await snapshot(parent, [
        '--keep',
        '1',
        '--allow-partial',
        '--out-dir',
        'svc-snapshot-2026-02-01',
        '--json',
      ]);
      expect(partial.code).toBe(4);
      expect(SnapshotSummary.parse(JSON.parse(partial.stdout)).pruned).toEqual([]);
      const failed = await snapshot(parent, ['--keep', '1', '--out-dir', 'svc-snapshot-2026-02-02']);
      expect(failed.code).toBe(1);
    } finally {
      site.backend.clearFaults();
    }
    expect(readdirSync(parent).sort()).toEqual([...before, 'svc-snapshot-2026-02-01'].sort());
  });

  it('with the default output name prunes the svc-snapshot-<date> directories of the working directory', async () => {
    const parent = mixedParent();
    const res = await snapshot(parent, ['--keep', '2', '--json']);
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    expect(summary.outDir).toMatch(/svc-snapshot-\d{4}-\d{2}-\d{2}$/);
    // The test dates are all older than today's: only 01-09 stays beside the new one.
    expect(summary.pruned).toEqual(['01', '02', '05'].map((d) => join(parent, `svc-snapshot-2026-01-${d}`)));
  });

  // Through the binary, the values argv parsing could mistake; every other value is test/unit/cron.test.ts's (parseKeep).
  it.each([['0'], ['-1'], ['']])('refuses --keep %j as a usage error before any request', async (value) => {
    const parent = tmpDir();
    const requests = site.backend.requests.length;
    const res = await snapshot(parent, ['--keep', value, '--out-dir', 'svc-snapshot-2026-02-01']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--keep must be a whole number of at least 1/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(site.backend.requests.length).toBe(requests);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('refuses --keep with an output directory whose name has no date', async () => {
    const parent = tmpDir();
    const res = await snapshot(parent, ['--keep', '3', '--out-dir', 'latest']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--keep needs an output directory whose name holds the date/);
    expect(readdirSync(parent)).toEqual([]);
  });
});

describe('--keep on collect', () => {
  it('deletes older complete raw collections, never one with failed routes nor a snapshot', async () => {
    const parent = tmpDir();
    for (const d of ['2026-01-01', '2026-01-02', '2026-01-03'])
      cpSync(completeCollection, join(parent, `svc-snapshot-raw-${d}`), { recursive: true });
    cpSync(failedCollection, join(parent, 'svc-snapshot-raw-2026-01-04'), { recursive: true });
    cpSync(completeSnapshot, join(parent, 'svc-snapshot-raw-2026-01-05'), { recursive: true });
    cpSync(completeSnapshot, join(parent, 'svc-snapshot-2026-01-01'), { recursive: true });
    const res = await runCli(
      [
        'collect',
        '--base-url',
        site.url,
        '--ca-file',
        site.caFile,
        '--keep',
        '2',
        '--out-dir',
        'svc-snapshot-raw-2026-02-01',
        '--json',
      ],
      {
        env: { SVC_TOKEN: TOKEN },
        cwd: parent,
      },
    );
    expect(res.code).toBe(0);
    const summary = CollectSummary.parse(JSON.parse(res.stdout));
    expect(summary.pruned).toEqual([
      join(parent, 'svc-snapshot-raw-2026-01-01'),
      join(parent, 'svc-snapshot-raw-2026-01-02'),
    ]);
    expect(readdirSync(parent).sort()).toEqual([
      'svc-snapshot-2026-01-01',
      'svc-snapshot-raw-2026-01-03',
      'svc-snapshot-raw-2026-01-04',
      'svc-snapshot-raw-2026-01-05',
      'svc-snapshot-raw-2026-02-01',
    ]);
  });
});
