import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { FailedError, TokenRejectedError } from '../../src/errors.js';
import { ALL_TYPES_TOKEN, createFakeBackend } from '../fake/backend.js';
import { inProcess } from '../helpers/in-process.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets } from '../helpers/assert-output.js';

/**
 * runSnapshot called in the test process against the fake's msw handlers.
 * Expectations come from outside the code under test: the recordings (made
 * from this fake, seed 2026, two realms) and what the binary writes from them.
 */

const BASE_URL = 'https://platform.example.org';
const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const TOKEN = ALL_TYPES_TOKEN.value;
// Local noon of the recording's day: the same date in every time zone.
const NOW = () => new Date(2026, 10, 21, 12, 0, 0);

function recordedSite() {
  return createFakeBackend({
    release: '3.14.1',
    seed: 2026,
    realms: [
      { id: 'libvirt', driver: 'libvirt' },
      { id: 'altvirt', driver: 'altvirt' },
    ],
    baseUrl: BASE_URL,
  });
}

function exportFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('_'))
    .sort();
}

/** A collection manifest without what changes from run to run (time, durations). */
function stableCollectionManifest(file: string) {
  const m = JSON.parse(readFileSync(file, 'utf8'));
  delete m.time;
  for (const r of m.routes) if (r.durationMs !== undefined) r.durationMs = 0;
  return m;
}

describe('runSnapshot in-process against the msw handlers', () => {
  it('writes, byte for byte, the exports the binary writes from the recording of the same fake, and raw/ equal to the recording', async () => {
    const backend = recordedSite();
    const cwd = tmpDir();
    const run = inProcess(backend.handlers, { env: { SVC_TOKEN: TOKEN }, cwd, now: NOW });
    const out = join(cwd, 'live');
    const result = await runSnapshot({ baseUrl: BASE_URL, outDir: out, raw: true }, run.deps);
    expect(result.exitCode).toBe(0);
    expect(run.stdout()).toMatch(/Snapshot \(live\)/);
    // The handlers answered every request (none went to a network).
    expect(run.dispatcher.seen.length).toBe(backend.requests.length);
    expect(backend.requests.length).toBeGreaterThan(15);
    expect(backend.requests.every((r) => r.method === 'GET' && !r.write && r.status === 200)).toBe(true);

    const replayed = join(cwd, 'replayed');
    const bin = await runCli(['--replay', RECORDING, '--out-dir', replayed, '--quiet'], { cwd });
    expect(bin.code, bin.stderr).toBe(0);

    const files = exportFiles(out);
    expect(files).toHaveLength(15);
    expect(files).toEqual(exportFiles(replayed));
    for (const f of files) expect(readFileSync(join(out, f)).equals(readFileSync(join(replayed, f))), f).toBe(true);
    const live = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8'));
    const replay = JSON.parse(readFileSync(join(replayed, '_snapshot-manifest.json'), 'utf8'));
    expect(live).toMatchObject({ source: 'live', complete: true, baseUrl: BASE_URL });
    expect(live.exports).toEqual(replay.exports);
    expect(live.nullFields).toEqual(replay.nullFields);

    // raw/ holds the bodies as the handlers sent them: the recording's files.
    const rawFiles = readdirSync(join(out, 'raw')).sort();
    expect(rawFiles).toEqual(readdirSync(RECORDING).sort());
    for (const f of rawFiles.filter((name) => !name.startsWith('_'))) {
      expect(readFileSync(join(out, 'raw', f)).equals(readFileSync(join(RECORDING, f))), f).toBe(true);
    }
    expect(stableCollectionManifest(join(out, 'raw', '_collection-manifest.json'))).toEqual(
      stableCollectionManifest(join(RECORDING, '_collection-manifest.json')),
    );
    expectNoSecrets([TOKEN], [out], [run.stdout(), run.stderr()]);
  });

  it('builds from disk the large bodies of a live run, spooled or in raw/, the same bytes, and publishes no spool', async () => {
    const cwd = tmpDir();
    const replayed = join(cwd, 'replayed');
    const bin = await runCli(['--replay', RECORDING, '--out-dir', replayed, '--quiet'], { cwd });
    expect(bin.code, bin.stderr).toBe(0);
    for (const raw of [false, true]) {
      const run = inProcess(recordedSite().handlers, { env: { SVC_TOKEN: TOKEN }, cwd, now: NOW });
      const out = join(cwd, raw ? 'with-raw' : 'spooled');
      // Every body counts as large here: each is written to the spool as it arrives and read back from disk by the build.
      const result = await runSnapshot(
        { baseUrl: BASE_URL, outDir: out, ...(raw ? { raw: true } : {}) },
        { ...run.deps, largeBodyBytes: 1 },
      );
      expect(result.exitCode, run.stderr()).toBe(0);
      const files = exportFiles(out);
      expect(files).toEqual(exportFiles(replayed));
      for (const f of files) expect(readFileSync(join(out, f)).equals(readFileSync(join(replayed, f))), f).toBe(true);
      expect(readdirSync(out).sort()).toEqual([...files, '_snapshot-manifest.json', ...(raw ? ['raw'] : [])].sort());
      expect(readdirSync(cwd).filter((n) => n.startsWith('.'))).toEqual([]);
      expectNoSecrets([TOKEN], [out], [run.stdout(), run.stderr()]);
    }
  });

  it('turns a refused token into a TokenRejectedError, exit 3, and publishes nothing', async () => {
    const backend = recordedSite();
    const cwd = tmpDir();
    const run = inProcess(backend.handlers, { env: { SVC_TOKEN: 'fake-token-unknown' }, cwd, now: NOW });
    const out = join(cwd, 'snap');
    const err = await runSnapshot({ baseUrl: BASE_URL, outDir: out }, run.deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TokenRejectedError);
    expect((err as Error).message).toMatch(
      /^401 on GET \/api\/\S+: the token \(from SVC_TOKEN\) was refused: the server does not accept the token itself/,
    );
    expect(exitCodeOf(err as TokenRejectedError)).toBe(3);
    expect(backend.requests.some((r) => r.status === 401)).toBe(true);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(cwd)).toEqual([]);
    expectNoSecrets(['fake-token-unknown'], [cwd], [(err as Error).message, run.stdout(), run.stderr()]);
  });

  it('fails on a persistent 500 (exit 1, nothing published), and with --allow-partial publishes it marked incomplete (exit 4)', async () => {
    const backend = recordedSite();
    backend.setFault('teams', { statuses: [500], always: true });
    const cwd = tmpDir();
    const run = inProcess(backend.handlers, { env: { SVC_TOKEN: TOKEN }, cwd, now: NOW });
    const out = join(cwd, 'snap');

    const err = await runSnapshot({ baseUrl: BASE_URL, outDir: out, retries: '1' }, run.deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FailedError);
    expect((err as Error).message).toMatch(/GET \/api\/teams: .*HTTP 500 after 2 attempts.*--allow-partial/);
    expect(exitCodeOf(err as FailedError)).toBe(1);
    expect(existsSync(out)).toBe(false);
    // Two attempts at the failing route: the retry happened.
    expect(backend.requests.filter((r) => r.route === 'teams')).toHaveLength(2);

    const result = await runSnapshot({ baseUrl: BASE_URL, outDir: out, retries: '1', allowPartial: true }, run.deps);
    expect(result.exitCode).toBe(4);
    const manifest = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8'));
    expect(manifest.complete).toBe(false);
    const teams = manifest.exports.find((e: { export: string }) => e.export === 'teams');
    expect(teams).toMatchObject({ available: false, count: 0 });
    expect(teams.reason).toMatch(/GET \/api\/teams failed/);
    // What did not fail is exported as the recording has it.
    const users = manifest.exports.find((e: { export: string }) => e.export === 'users');
    const recorded = JSON.parse(readFileSync(join(RECORDING, 'api-users.json'), 'utf8'));
    expect(users).toMatchObject({ available: true, count: (recorded as unknown[]).length });
    expect(run.stdout()).toMatch(/INCOMPLETE/);
  });
});
