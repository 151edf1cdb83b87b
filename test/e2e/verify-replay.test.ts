/**
 * The restore drill end to end: `verify --replay` builds a snapshot's
 * exports again from its raw/ and compares them byte for byte with the
 * published ones, on a directory and on an archive, writing nothing into
 * either. Run `npm run build` first: these tests run bin/.
 */
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerifySummary } from '../../src/summaries/schemas.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { hasAge, makeIdentity } from '../helpers/age-keys.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

async function verify(args: string[]) {
  const res = await runCli(['verify', ...args, '--json', '--quiet']);
  return { code: res.code, summary: VerifySummary.parse(JSON.parse(res.stdout)), stderr: res.stderr };
}

let work: string;
let snap: string;
let key: ReturnType<typeof makeIdentity>;
beforeAll(async () => {
  work = tmpDir('svc-drill-');
  snap = join(work, 'svc-snapshot-2026-11-21');
  const args = ['--replay', RECORDING, '--raw', '--include', 'vms', '--out-dir', snap, '--quiet'];
  if (hasAge()) {
    key = makeIdentity(work, 'key.txt');
    args.push('--encrypt-to', key.recipient);
  }
  expect((await runCli(args)).code).toBe(0);
});

/** A copy of the snapshot, to damage. */
function copy(name: string): string {
  const dir = join(work, name);
  cpSync(snap, dir, { recursive: true });
  return dir;
}

describe('verify --replay', () => {
  it('builds every export again from raw/, each byte-identical, and writes nothing into the snapshot', async () => {
    const before = readdirSync(snap, { recursive: true }).map(String).sort();
    const mtime = statSync(snap).mtimeMs;
    const { code, summary } = await verify([snap, '--replay']);
    expect(code).toBe(0);
    expect(summary.dirs[0]!.replay).toEqual({ ok: true, exports: 18 });
    expect(readdirSync(snap, { recursive: true }).map(String).sort()).toEqual(before);
    expect(statSync(snap).mtimeMs).toBe(mtime);
  });

  it('names the first export and record that differ by its key columns, also when the hash check failed (exit 1)', async () => {
    const dir = copy('changed');
    const file = readdirSync(dir).find((f) => f.includes('-team_memberships ('))!;
    const records = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>[];
    records[2]!.lastName = 'Changed';
    writeFileSync(join(dir, file), `${JSON.stringify(records, null, 2)}\n`);
    const { code, summary } = await verify([dir, '--replay']);
    expect(code).toBe(1);
    const d = summary.dirs[0]!;
    expect(d.files.find((f) => f.file === file)?.state).toBe('sha256 mismatch');
    expect(d.replay?.ok).toBe(false);
    expect(d.replay?.differs).toMatchObject({
      export: 'team_memberships',
      file,
      detail: 'record 3 differs in lastName',
    });
    const keyColumns = Object.keys(d.replay!.differs!.key!);
    expect(keyColumns.length).toBeGreaterThan(1);
    expect(d.replay!.differs!.key).toEqual(Object.fromEntries(keyColumns.map((k) => [k, records[2]![k]])));
    const text = await runCli(['verify', dir, '--replay', '--quiet']);
    expect(text.stdout).toMatch(
      /FAILED: replay: team_memberships \(.*\) differs at record \{.*\}: record 3 differs in lastName/,
    );
  });

  it('a raw/ changed since: the drill cannot read it and says so (exit 1)', async () => {
    const dir = copy('raw-changed');
    writeFileSync(join(dir, 'raw', 'api-users.json'), '[]');
    const { code, summary } = await verify([dir, '--replay']);
    expect(code).toBe(1);
    expect(summary.dirs[0]!.replay?.error).toMatch(/^its raw\/ cannot be read: .*api-users\.json/);
  });

  it('a snapshot made without --raw: exit 1, "made without --raw"', async () => {
    const dir = join(work, 'no-raw');
    expect((await runCli(['--replay', RECORDING, '--out-dir', dir, '--quiet'])).code).toBe(0);
    const { code, summary } = await verify([dir, '--replay']);
    expect(code).toBe(1);
    expect(summary.dirs[0]!.replay?.error).toMatch(/^made without --raw/);
  });

  it.runIf(hasAge())('works on an archive with --identity, and leaves no plaintext behind', async () => {
    const { code, summary } = await verify([`${snap}.tar.age`, '--replay', '--identity', key.file]);
    expect(code).toBe(0);
    expect(summary.dirs[0]).toMatchObject({ kind: 'archive', contents: 'snapshot', replay: { ok: true, exports: 18 } });
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('svc-snapshot-drill-'))).toEqual([]);
  });
});
