/**
 * `history load --allowed-signers` (CONTRACT section 13): every snapshot's
 * signature is checked before anything is loaded; one unsigned, signed by
 * another key or changed after signing loads nothing (exit 1); the key's
 * fingerprint is kept in `runs` and shown by `history runs`.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { EXIT } from '../../src/exit-codes.js';
import { manifestsIn, verifyDir } from '../../src/verify/verify-dir.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { HistoryRunsSummary } from '../../src/summaries/schemas.js';
import { runHistory } from '../../src/commands/history.js';
import { DomainError } from '../../src/errors.js';
import { clearSigningSecrets, loadSigningKey } from '../../src/sign/key.js';
import { signMessage } from '../../src/sign/sshsig.js';
import { captureDeps, NIGHTS, writeNight } from '../helpers/history-fixtures.js';
import { REPO_ROOT } from '../helpers/run-cli.js';
import { allowedLine, hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';

let work: string;
let keys: string;
let key: string;
let other: string;
let allowed: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'svc-history-signed-'));
  keys = keyDir();
  key = makeKey(keys, 'nightly');
  other = makeKey(keys, 'other');
  allowed = join(keys, 'allowed_signers');
  writeFileSync(allowed, `# the nightly job\r\n${allowedLine(key, 'nightly@site', 'namespaces="svc-snapshot"')}\r\n`);
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  removeKeys(keys);
  clearSigningSecrets();
});

function sign(dir: string, keyFile: string): void {
  const manifest = join(dir, '_snapshot-manifest.json');
  writeFileSync(`${manifest}.sig`, signMessage(readFileSync(manifest), loadSigningKey(keyFile, '--sign-key')));
}

async function failure(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return { code: exitCodeOf(err), message: err.message };
    throw err;
  }
  throw new Error('expected a failure');
}

describe.runIf(hasSshKeygen())('history load --allowed-signers', () => {
  it('loads signed snapshots and keeps the key in runs; an unsigned, foreign-signed or changed one loads nothing', async () => {
    const [a, b] = [writeNight(join(work, 'n1'), NIGHTS[0]!), writeNight(join(work, 'n2'), NIGHTS[1]!)];
    const history = join(work, 'h.sqlite');
    // b unsigned: nothing loaded, not even a.
    sign(a, key);
    const unsigned = await failure(
      runHistory({ history, allowedSigners: allowed }, ['load', a, b], captureDeps(work).deps),
    );
    expect(unsigned.code).toBe(EXIT.failed);
    expect(unsigned.message).toMatch(/n2: _snapshot-manifest\.json is not signed.*nothing was loaded/);
    expect(existsSync(history)).toBe(false);
    // b signed by a key not listed.
    sign(b, other);
    expect(
      (await failure(runHistory({ history, allowedSigners: allowed }, ['load', a, b], captureDeps(work).deps))).message,
    ).toMatch(/valid signature, but its key is not listed in .*allowed_signers/);
    // b changed after signing.
    sign(b, key);
    const manifest = join(b, '_snapshot-manifest.json');
    const text = readFileSync(manifest, 'utf8');
    writeFileSync(manifest, text.replace('"complete": true', '"complete": true '));
    expect(
      (await failure(runHistory({ history, allowedSigners: allowed }, ['load', a, b], captureDeps(work).deps))).message,
    ).toMatch(/does not match the manifest/);
    writeFileSync(manifest, text);
    const load = captureDeps(work);
    expect((await runHistory({ history, allowedSigners: allowed }, ['load', a, b], load.deps)).exitCode).toBe(EXIT.ok);
    const fingerprint = loadSigningKey(key, '--sign-key').fingerprint;
    const runs = captureDeps(work);
    await runHistory({ history, json: true }, ['runs'], runs.deps);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.out())).runs.map((r) => r.key)).toEqual([fingerprint, fingerprint]);
    const text2 = captureDeps(work);
    await runHistory({ history }, ['runs'], text2.deps);
    expect(text2.out()).toContain(`signed ${fingerprint}`);
  });

  it('a raw collection is loaded when its collection manifest is signed by a listed key', async () => {
    const raw = join(work, 'raw');
    cpSync(join(REPO_ROOT, 'recordings', 'platform-3.14.1'), raw, { recursive: true });
    const history = join(work, 'raw.sqlite');
    expect(
      (await failure(runHistory({ history, allowedSigners: allowed }, ['load', raw], captureDeps(work).deps))).message,
    ).toMatch(/_collection-manifest\.json is not signed/);
    const manifest = join(raw, '_collection-manifest.json');
    writeFileSync(`${manifest}.sig`, signMessage(readFileSync(manifest), loadSigningKey(key, '--sign-key')));
    expect(
      (await runHistory({ history, allowedSigners: allowed }, ['load', raw], captureDeps(work).deps)).exitCode,
    ).toBe(EXIT.ok);
    const runs = captureDeps(work);
    await runHistory({ history, json: true }, ['runs'], runs.deps);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.out())).runs.map((r) => r.key)).toEqual([
      loadSigningKey(key, '--sign-key').fingerprint,
    ]);
  });

  it('history as-of of a snapshot whose manifest lists spreadsheets writes a manifest without them, which verify accepts', async () => {
    const dir = writeNight(join(work, 'with-files'), NIGHTS[0]!);
    const manifestFile = join(dir, '_snapshot-manifest.json');
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'users.csv'), 'id\n');
    m.files = [{ name: 'users.csv', bytes: 3, sha256: createHash('sha256').update('id\n').digest('hex') }];
    writeFileSync(manifestFile, `${JSON.stringify(m, null, 2)}\n`);
    const history = join(work, 'files.sqlite');
    await runHistory({ history }, ['load', dir], captureDeps(work).deps);
    const out = join(work, 'as-of');
    await runHistory({ history, outDir: out, quiet: true }, ['as-of', '2026-11-01'], captureDeps(work).deps);
    expect(JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8'))).not.toHaveProperty('files');
    const report = await verifyDir(out, await manifestsIn(out), undefined, new Date());
    expect(report.files.filter((f) => f.state !== 'ok')).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('without --allowed-signers, runs show no key; a malformed allowed_signers file is a usage error with its line', async () => {
    const dir = writeNight(join(work, 'plain'), NIGHTS[0]!);
    const history = join(work, 'plain.sqlite');
    await runHistory({ history }, ['load', dir], captureDeps(work).deps);
    const runs = captureDeps(work);
    await runHistory({ history, json: true }, ['runs'], runs.deps);
    expect(HistoryRunsSummary.parse(JSON.parse(runs.out())).runs.map((r) => r.key)).toEqual([null]);
    const bad = join(work, 'bad_signers');
    writeFileSync(bad, 'nightly@site ssh-ed25519\n');
    const refused = await failure(runHistory({ history, allowedSigners: bad }, ['load', dir], captureDeps(work).deps));
    expect(refused).toMatchObject({
      code: EXIT.usage,
      message: expect.stringMatching(/bad_signers line 1 is malformed/),
    });
  });
});
