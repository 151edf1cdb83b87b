/**
 * `svc-snapshot verify <dir>.tar.age` end to end: archives the tool wrote
 * and one an admin made with GNU tar and Debian's age, checked without a
 * key and decrypted as a stream with --identity; archives damaged every way
 * they can be; signatures; and --sample over many directories and archives.
 * Run `npm run build` first: these tests run bin/.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VerifySummary } from '../../src/summaries/schemas.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { hasAge, makeIdentity } from '../helpers/age-keys.js';
import { allowedLine, hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const PUBLISHED = z.fromJSONSchema(
  (
    JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'summary-schema.json'), 'utf8')) as {
      $defs: Record<string, Parameters<typeof z.fromJSONSchema>[0]>;
    }
  ).$defs.verify!,
);

/** `verify --json` of `targets`: exit code, the output checked against the published schema, stderr. */
async function verify(targets: string[], extra: string[] = [], env: Record<string, string> = {}) {
  const res = await runCli(['verify', ...targets, '--json', '--quiet', ...extra], { env });
  const json: unknown = JSON.parse(res.stdout);
  PUBLISHED.parse(json);
  return { code: res.code, summary: VerifySummary.parse(json), stderr: res.stderr, stdout: res.stdout };
}

let work: string;
let key: ReturnType<typeof makeIdentity>;
let other: ReturnType<typeof makeIdentity>;
let archive: string;
let signKey: string;
let allowed: string;
let keys: string | undefined;
afterAll(() => {
  if (keys) removeKeys(keys);
});
beforeAll(async () => {
  if (!hasAge()) return;
  work = tmpDir('svc-verify-archive-');
  key = makeIdentity(work, 'key.txt');
  other = makeIdentity(work, 'other.txt');
  const env: Record<string, string> = {};
  if (hasSshKeygen()) {
    keys = keyDir();
    signKey = makeKey(keys, 'nightly');
    allowed = join(keys, 'allowed_signers');
    writeFileSync(allowed, `${allowedLine(signKey, 'nightly@site')}\n`);
    env.SVC_SIGN_KEY = signKey;
  }
  const out = join(work, 'svc-snapshot-2026-11-21');
  const res = await runCli(
    ['--replay', RECORDING, '--raw', '--out-dir', out, '--encrypt-to', key.recipient, '--quiet'],
    {
      env,
    },
  );
  expect(res.code).toBe(0);
  archive = `${out}.tar.age`;
});

/** A copy of the archive under another name (and its signature), to damage. */
function copy(name: string): string {
  const to = join(work, `${name}.tar.age`);
  copyFileSync(archive, to);
  return to;
}

describe.runIf(hasAge())('verify of an archive', () => {
  it('without an identity: a well-formed age file, its recipients counted, nothing decrypted', async () => {
    const { code, summary } = await verify([archive]);
    expect(code).toBe(0);
    expect(summary.dirs[0]).toMatchObject({ kind: 'archive', ok: true, archive: { decrypted: false, recipients: 1 } });
  });

  it('with --identity: every file checked against the manifest inside, as for the directory', async () => {
    const dir = await verify([archive.replace(/\.tar\.age$/, '')]);
    const { code, summary, stdout, stderr } = await verify([archive], ['--identity', key.file]);
    expect(code).toBe(0);
    const r = summary.dirs[0]!;
    expect(r).toMatchObject({ kind: 'archive', contents: 'snapshot', ok: true, archive: { decrypted: true } });
    expect(r.files).toEqual(dir.summary.dirs[0]!.files);
    expect(r.files.length).toBeGreaterThan(30);
    // The identity is never printed, from the flag or the variable.
    const secret = readFileSync(key.file, 'utf8').match(/AGE-SECRET-KEY-1\S+/)![0];
    expect(`${stdout}${stderr}`).not.toContain(secret);
    const viaEnv = await verify([archive], [], { SVC_IDENTITY_FILE: key.file });
    expect(viaEnv.summary.dirs[0]!.archive?.decrypted).toBe(true);
  });

  it('checks an archive whose tar GNU tar made and age -r encrypted', async () => {
    const made = join(work, 'by-hand.tar.age');
    const tarBytes = execFileSync('tar', ['-c', '-C', work, 'svc-snapshot-2026-11-21']);
    execFileSync('age', ['-r', key.recipient, '-o', made], { input: tarBytes });
    const { code, summary } = await verify([made], ['--identity', key.file]);
    expect(code).toBe(0);
    expect(summary.dirs[0]).toMatchObject({ contents: 'snapshot', ok: true });
  });

  it('finds a file changed inside the archive, as verify of the directory would', async () => {
    const into = tmpDir('svc-verify-archive-changed-');
    execFileSync('cp', ['-r', archive.replace(/\.tar\.age$/, ''), into]);
    const dir = join(into, 'svc-snapshot-2026-11-21');
    const users = readdirSync(dir).find((f) => f.includes('-users ('))!;
    writeFileSync(join(dir, users), '[]\n');
    const made = join(work, 'changed.tar.age');
    execFileSync('age', ['-r', key.recipient, '-o', made], {
      input: execFileSync('tar', ['-c', '-C', into, 'svc-snapshot-2026-11-21']),
    });
    const { code, summary } = await verify([made], ['--identity', key.file]);
    expect(code).toBe(1);
    expect(summary.dirs[0]!.files.find((f) => f.file === users)?.state).toBe('sha256 mismatch');
  });

  it.each([
    [
      'a wrong identity',
      () => archive,
      () => other.file,
      /wrong identity: the archive is not encrypted to any identity/,
    ],
    [
      'an archive cut short',
      () => {
        const f = copy('cut');
        truncateSync(f, 100_000);
        return f;
      },
      () => key.file,
      /cut or altered at its end/,
    ],
    [
      'an altered byte',
      () => {
        const f = copy('altered');
        const b = readFileSync(f);
        b[5000]! ^= 1;
        writeFileSync(f, b);
        return f;
      },
      () => key.file,
      /altered: chunk 1 of \d+ does not authenticate/,
    ],
    [
      'a file that is not age',
      () => {
        const f = join(work, 'plain.tar.age');
        writeFileSync(f, 'svc-snapshot-2026-11-21/\n');
        return f;
      },
      () => key.file,
      /not an age file: it does not begin with "age-encryption\.org\/v1"/,
    ],
    [
      'an age file of something that is no tar',
      () => {
        const f = join(work, 'no-tar.tar.age');
        execFileSync('age', ['-r', key.recipient, '-o', f], { input: Buffer.alloc(2048, 'no tar ') });
        return f;
      },
      () => key.file,
      /not an archive of an output: what age decrypts is not a tar/,
    ],
    [
      'a tar of a directory named with a control character',
      () => {
        const f = join(work, 'control.tar.age');
        mkdirSync(join(work, 'by-name', 'top\u001b[2J'), { recursive: true });
        execFileSync('age', ['-r', key.recipient, '-o', f], {
          input: execFileSync('tar', ['-c', '-C', join(work, 'by-name'), 'top\u001b[2J']),
        });
        return f;
      },
      () => key.file,
      /its directory top\\u001b\[2J\/ holds no manifest of svc-snapshot/,
    ],
  ])('%s: exit 1 saying so, never a stack trace', async (_what, file, identity, message) => {
    const res = await runCli(['verify', file(), '--identity', identity()]);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(message);
    expect(`${res.stdout}${res.stderr}`).not.toMatch(/\n\s+at |AGE-SECRET-KEY/);
  });

  it('an identity file that is not one: a usage error naming it, exit 2', async () => {
    const res = await runCli(['verify', archive, '--identity', join(work, 'missing.txt')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--identity names .*missing\.txt, which cannot be read \(ENOENT\)/);
    const bad = join(work, 'bad-identity.txt');
    writeFileSync(bad, `# created: now\n${key.recipient}\n`);
    const res2 = await runCli(['verify', archive, '--identity', bad]);
    expect(res2.code).toBe(2);
    expect(res2.stderr).toMatch(/line 2 of .*bad-identity\.txt \(--identity\) is not an age X25519 identity/);
  });

  it('--replay of an archive without an identity is a usage error (exit 2)', async () => {
    const res = await runCli(['verify', archive, '--replay']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/verify --replay of an archive needs its identity/);
  });
});

describe.runIf(hasAge() && hasSshKeygen())('the signature of an archive', () => {
  it('is valid and allowed; a changed archive or signature fails with --allowed-signers', async () => {
    const ok = await verify([archive], ['--allowed-signers', allowed, '--identity', key.file]);
    expect(ok.code).toBe(0);
    expect(ok.summary.dirs[0]!.signature.state).toBe('valid');
    expect(ok.summary.dirs[0]!.manifestSignature?.state).toBe('valid');
    const changed = copy('resigned');
    const b = readFileSync(changed);
    b[b.length - 1]! ^= 1;
    writeFileSync(changed, b);
    copyFileSync(`${archive}.sig`, `${changed}.sig`);
    const bad = await verify([changed], ['--allowed-signers', allowed]);
    expect(bad.code).toBe(1);
    expect(bad.summary.dirs[0]!.signature).toMatchObject({ state: 'invalid' });
    expect(bad.summary.dirs[0]!.signature.reason).toMatch(/does not match the archive/);
    const unsigned = copy('unsigned');
    const none = await verify([unsigned], ['--allowed-signers', allowed]);
    expect(none.code).toBe(1);
    expect(none.summary.dirs[0]!.signature.reason).toMatch(/no signature \(unsigned\.tar\.age\.sig\)/);
  });
});

describe.runIf(hasAge())('verify --sample', () => {
  it('checks a fixed part of the names, a directory with its archive, and t runs cover everything once', async () => {
    const targets = [archive, archive.replace(/\.tar\.age$/, '')];
    for (const day of ['01', '02', '03', '04', '05']) {
      const out = join(work, `sample-2026-12-${day}`);
      const res = await runCli(['--replay', RECORDING, '--out-dir', out, '--quiet', '--encrypt-to', key.recipient]);
      expect(res.code).toBe(0);
      targets.push(out, `${out}.tar.age`);
    }
    const seen: string[] = [];
    for (let n = 1; n <= 3; n++) {
      const { code, summary } = await verify(targets, ['--sample', `${n}/3`]);
      expect(code).toBe(0);
      expect(summary.sample).toEqual({ n, t: 3, checked: summary.dirs.length, of: targets.length });
      for (const d of summary.dirs) {
        const base = d.dir.replace(/\.tar\.age$/, '');
        // A directory and its archive fall in the same part.
        expect(summary.dirs.map((x) => x.dir)).toContain(d.kind === 'archive' ? base : `${base}.tar.age`);
        expect(d.kind === 'archive').toBe(d.dir.endsWith('.tar.age'));
      }
      seen.push(...summary.dirs.map((d) => d.dir));
    }
    expect(seen.sort()).toEqual([...targets].sort());
    const text = await runCli(['verify', ...targets, '--sample', '2/3', '--quiet']);
    expect(text.stdout).toMatch(/^sample 2\/3: checked \d+ of 12$/m);
  });

  it('refuses a sample that is not n/t with 1 <= n <= t (exit 2)', async () => {
    for (const bad of ['0/7', '8/7', '7', 'a/b']) {
      const res = await runCli(['verify', archive, '--sample', bad]);
      expect(res.code, bad).toBe(2);
      expect(res.stderr).toMatch(/--sample must be n\/t with 1 <= n <= t <= 1000/);
    }
  });
});
