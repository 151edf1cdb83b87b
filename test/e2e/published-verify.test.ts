/**
 * Every directory svc-snapshot writes passes its own `svc-snapshot verify`
 * (CONTRACT section 13): each command that publishes a directory, or adds to
 * one, with the options that change what it holds (--raw, --format,
 * --findings, --include vms, --sign-key, --allow-partial, --history), live
 * and replayed, and `history as-of` of each kind of night loaded. Runs the
 * built binary (`npm run build` first).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerifySummary } from '../../src/summaries/schemas.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';

const RECORDINGS = join(REPO_ROOT, 'recordings');
const NIGHT1 = join(RECORDINGS, 'platform-3.14.1');
const NIGHT2 = join(RECORDINGS, 'platform-3.14.1-night2');
const OLD_BACKEND = join(RECORDINGS, 'platform-3.13.8');

/** The commands that write no directory; every other command is run below. */
const WRITE_NO_DIRECTORY = ['check', 'diff', 'findings', 'notify', 'verify'];

let site: FakeSite;
let audit: FakeServer;
let keys: string | undefined;
beforeAll(async () => {
  site = await startFakeSite();
  audit = await startFakeServer(createAuditBackend().handlers, { tls: true });
  if (hasSshKeygen()) keys = keyDir();
});
afterAll(async () => {
  await site?.close();
  await audit?.close();
  if (keys) removeKeys(keys);
});

describe('every directory the tool writes', () => {
  it('passes svc-snapshot verify: snapshots live and replayed, collections, audits, converted and reported snapshots, and as-of of every kind of night', async () => {
    const work = tmpDir('svc-published-');
    const key = keys ? makeKey(keys, 'nightly') : undefined;
    const sign = key ? ['--sign-key', key] : [];
    const live = ['--base-url', site.url, '--ca-file', site.caFile];
    const liveEnv = { SVC_TOKEN: ALL_TYPES_TOKEN.value };
    /** Output directory → what wrote it, for the failure message. */
    const written = new Map<string, string>();
    const run = async (
      what: string,
      args: string[],
      opts: { env?: Record<string, string>; exit?: number; dir?: string } = {},
    ) => {
      const res = await runCli([...args, '--quiet'], { cwd: work, ...(opts.env ? { env: opts.env } : {}) });
      expect(res.code, `${what}: ${res.stderr}`).toBe(opts.exit ?? 0);
      if (opts.dir) written.set(join(work, opts.dir), what);
    };
    const dateOf = (dir: string) =>
      (JSON.parse(readFileSync(join(work, dir, '_snapshot-manifest.json'), 'utf8')) as { date: string }).date;

    // snapshot, live: plain; every option that adds files; a partial one.
    await run('snapshot (live)', [...live, '--out-dir', 'live'], { env: liveEnv, dir: 'live' });
    await run(
      'snapshot (live) --raw --findings --include vms --format csv,xlsx,html --sign-key',
      [
        ...live,
        '--out-dir',
        'live-full',
        '--raw',
        '--findings',
        '--include',
        'vms',
        '--format',
        'csv,xlsx,html',
        ...sign,
      ],
      { env: liveEnv, dir: 'live-full' },
    );
    site.backend.setFault('drives', { statuses: [500], always: true });
    await run(
      'snapshot (live) --allow-partial --raw',
      [...live, '--out-dir', 'live-partial', '--allow-partial', '--raw', '--retries', '0'],
      { env: liveEnv, exit: 4, dir: 'live-partial' },
    );
    await run('collect with a failed route', ['collect', ...live, '--out-dir', 'raw-partial', '--retries', '0'], {
      env: liveEnv,
      exit: 4,
      dir: 'raw-partial',
    });
    site.backend.clearFaults();
    // collect and audit, signed.
    await run('collect --sign-key', ['collect', ...live, '--out-dir', 'raw', ...sign], { env: liveEnv, dir: 'raw' });
    await run(
      'audit --sign-key',
      ['audit', '--audit-url', audit.url, '--ca-file', getTestCerts().caFile, '--out-dir', 'audit', ...sign],
      { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN }, dir: 'audit' },
    );
    // snapshot --replay: plain; with every option, loaded into the history as it is published; of an older backend.
    await run('snapshot --replay', ['--replay', NIGHT1, '--out-dir', 'replay'], { dir: 'replay' });
    await run(
      'snapshot --replay --raw --findings --include vms --format csv,xlsx,html --sign-key --history',
      [
        '--replay',
        NIGHT1,
        '--out-dir',
        'replay-full',
        '--raw',
        '--findings',
        '--include',
        'vms',
        '--format',
        'csv,xlsx,html',
        ...sign,
        '--history=replays.sqlite',
      ],
      { dir: 'replay-full' },
    );
    await run(
      'snapshot --replay --findings --include vms (3.13.8)',
      ['--replay', OLD_BACKEND, '--out-dir', 'replay-3.13.8', '--findings', '--include', 'vms'],
      { dir: 'replay-3.13.8' },
    );
    await run(
      'snapshot --replay of a collect',
      ['--replay', 'raw', '--out-dir', 'replay-of-collect', '--raw', '--findings'],
      { dir: 'replay-of-collect' },
    );
    // convert and report write into a snapshot.
    await run(
      'snapshot --replay --include vms (to convert)',
      ['--replay', NIGHT2, '--out-dir', 'converted', '--include', 'vms'],
      { dir: 'converted' },
    );
    await run('convert --format csv,xlsx --include vms', [
      'convert',
      'converted',
      '--format',
      'csv,xlsx',
      '--include',
      'vms',
    ]);
    await run('snapshot --replay --raw (to report)', ['--replay', NIGHT2, '--out-dir', 'reported', '--raw'], {
      dir: 'reported',
    });
    await run('report into its snapshot', ['report', 'reported', '--previous', 'replay']);
    // history as-of: a night loaded as published (--raw, --findings, spreadsheets, a signature), one loaded from a raw
    // collection, a live one with everything, a partial one, and one of a backend before 3.14.1.
    await run('history load (a raw collection)', [
      'history',
      'load',
      NIGHT2,
      '--include',
      'vms',
      '--history=replays.sqlite',
    ]);
    await run(
      'history as-of (--raw --findings --format, signed)',
      ['history', 'as-of', '2026-11-21', '--out-dir', 'asof-replay-full', '--history=replays.sqlite'],
      { dir: 'asof-replay-full' },
    );
    await run(
      'history as-of (a raw collection loaded)',
      ['history', 'as-of', '2026-11-22', '--out-dir', 'asof-collection', '--history=replays.sqlite'],
      { dir: 'asof-collection' },
    );
    await run('history load (live, partial)', [
      'history',
      'load',
      'live-full',
      'live-partial',
      '--allow-partial',
      '--history=live.sqlite',
    ]);
    await run(
      'history as-of (live, partial, the newest of the day)',
      ['history', 'as-of', dateOf('live-partial'), '--out-dir', 'asof-live', '--history=live.sqlite'],
      { exit: 4, dir: 'asof-live' },
    );
    await run('history load (3.13.8)', ['history', 'load', 'replay-3.13.8', '--history=old.sqlite']);
    await run(
      'history as-of (3.13.8)',
      ['history', 'as-of', '2026-11-21', '--out-dir', 'asof-3.13.8', '--history=old.sqlite'],
      { dir: 'asof-3.13.8' },
    );

    const dirs = [...written.keys()];
    const res = await runCli(['verify', ...dirs, '--json', '--quiet']);
    const summary = VerifySummary.parse(JSON.parse(res.stdout));
    const failing = summary.dirs
      .filter((d) => !d.ok)
      .map((d) => ({
        dir: written.get(d.dir) ?? d.dir,
        error: d.error,
        files: d.files.filter((f) => !['ok', 'not covered'].includes(f.state)),
      }));
    expect(failing).toEqual([]);
    expect(res.code, res.stderr).toBe(0);
    expect(summary.dirs.map((d) => d.kind)).toEqual(
      dirs.map((d) => (d.endsWith('/audit') ? 'audit' : /\/raw(-partial)?$/.test(d) ? 'collection' : 'snapshot')),
    );
    // What as-of did not write is not named: the full night came back without raw/, spreadsheets or report.
    const asof = summary.dirs.find((d) => d.dir.endsWith('asof-replay-full'))!;
    expect(asof.files.map((f) => f.file)).toContain('_findings.json');
    expect(asof.files.filter((f) => f.file.startsWith('raw/') || /\.(csv|xlsx|html)$/.test(f.file))).toEqual([]);
    if (key)
      expect(summary.dirs.filter((d) => d.signature.state === 'valid').map((d) => written.get(d.dir))).toEqual(
        expect.arrayContaining(['audit --sign-key', 'collect --sign-key']),
      );

    // Every command is run above, or writes no directory.
    const help = await runCli(['--help']);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    const ran = ['snapshot', 'collect', 'audit', 'convert', 'report', 'history'];
    expect(commands.filter((c) => !ran.includes(c) && !WRITE_NO_DIRECTORY.includes(c))).toEqual([]);
    expect(commands).toEqual(expect.arrayContaining([...ran, ...WRITE_NO_DIRECTORY]));
  });
});
