/**
 * `--encrypt-to` end to end: the real binary writes `<dir>.tar.age` beside
 * what it published, and Debian's age and tar read it back, every file byte
 * for byte; the recipients file, the signature, --keep and a disk that fills
 * while the archive is written. Run `npm run build` first: these tests run
 * bin/.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPid, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { startFakeSite } from '../helpers/fake-site.js';
import { ageDecrypt, hasAge, makeIdentity, untar } from '../helpers/age-keys.js';
import { allowedLine, hasSshKeygen, keyDir, makeKey, removeKeys, sshVerify } from '../helpers/ssh-keys.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

/** Every file under `dir`, by its path relative to it, with the sha256 of its bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const abs = join(dir, rel);
    if (statSync(abs).isFile()) out[relative(dir, abs)] = createHash('sha256').update(readFileSync(abs)).digest('hex');
  }
  return out;
}

let work: string;
let alice: ReturnType<typeof makeIdentity>;
let bob: ReturnType<typeof makeIdentity>;
beforeAll(() => {
  if (!hasAge()) return;
  work = tmpDir('svc-archive-');
  alice = makeIdentity(work, 'alice.txt');
  bob = makeIdentity(work, 'bob.txt');
});

describe.runIf(hasAge())('--encrypt-to', () => {
  it('writes <dir>.tar.age (0600) that age -d and tar -x give back byte for byte, to each recipient of the flag and the file', async () => {
    const recipients = join(work, 'recipients.txt');
    writeFileSync(recipients, `# the auditors\n\n${bob.recipient}\n   \n# and alice again\n${alice.recipient}\n`);
    const out = join(work, 'svc-snapshot-2026-11-21');
    const res = await runCli(
      ['--replay', RECORDING, '--raw', '--format', 'csv', '--out-dir', out, '--encrypt-to', alice.recipient],
      { env: { SVC_ENCRYPT_TO_FILE: recipients } },
    );
    expect(res.stderr).toContain(`encrypting ${out}.tar.age to 2 recipients`);
    expect(res.code).toBe(0);
    // A recipient appears only with --debug.
    expect(`${res.stdout}${res.stderr}`).not.toContain(alice.recipient);
    expect(statSync(`${out}.tar.age`).mode & 0o777).toBe(0o600);
    expect(readFileSync(`${out}.tar.age`).subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    for (const who of [alice, bob]) {
      const into = join(work, `extract-${relative(work, who.file)}`);
      mkdirSync(into);
      untar(ageDecrypt(who.file, `${out}.tar.age`), into);
      expect(readdirSync(into)).toEqual(['svc-snapshot-2026-11-21']);
      expect(tree(join(into, 'svc-snapshot-2026-11-21'))).toEqual(tree(out));
    }
    // Owner 0, fixed modes, the manifest's time on every entry, a directory before what it holds.
    const time = (JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')) as { time: string }).time;
    const listing = execFileSync('tar', ['-tv', '--numeric-owner', '--full-time'], {
      input: ageDecrypt(alice.file, `${out}.tar.age`),
      env: { ...process.env, TZ: 'UTC' },
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    const stamp = `${time.slice(0, 10)} ${time.slice(11, 19)}`;
    expect(listing[0]).toMatch(new RegExp(`^drwxr-xr-x 0/0 +0 ${stamp} svc-snapshot-2026-11-21/$`));
    for (const line of listing.slice(1))
      expect(line).toMatch(new RegExp(`^(-rw-r--r--|drwxr-xr-x) 0/0 +\\d+ ${stamp} `));
    const names = listing.map((l) => l.split(` ${stamp} `)[1]!);
    expect(names.indexOf('svc-snapshot-2026-11-21/raw/')).toBeLessThan(
      names.indexOf('svc-snapshot-2026-11-21/raw/_collection-manifest.json'),
    );
  });

  it('gives the same tar for the same snapshot, and replaces an existing archive whole', async () => {
    const out = join(work, 'same');
    const tars: string[] = [];
    for (const _ of [1, 2]) {
      const res = await runCli(['--replay', RECORDING, '--out-dir', out, '--encrypt-to', alice.recipient, '--quiet']);
      expect(res.code).toBe(0);
      tars.push(
        createHash('sha256')
          .update(ageDecrypt(alice.file, `${out}.tar.age`))
          .digest('hex'),
      );
    }
    expect(tars[1]).toBe(tars[0]);
    expect(readdirSync(work).filter((f) => f.startsWith('.same'))).toEqual([]);
  });

  it("removes the temporary archive a killed run left beside, and no one else's", async () => {
    const parent = join(work, 'killed');
    mkdirSync(parent);
    const left = `.svc-snapshot-2026-11-21.tar.age.partial-${await deadPid()}-0badc0de`;
    const live = `.svc-snapshot-2026-11-21.tar.age.partial-${process.pid}-0badc0de`;
    const other = `.notes.tar.age.partial-${await deadPid()}-0badc0de`;
    for (const f of [left, live, other]) writeFileSync(join(parent, f), 'half an archive');
    const res = await runCli(
      ['--replay', RECORDING, '--out-dir', 'svc-snapshot-2026-11-21', '--encrypt-to', alice.recipient],
      { cwd: parent },
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`removed ${left}, left by a run that was killed`);
    expect(readdirSync(parent).sort()).toEqual(
      [live, other, 'svc-snapshot-2026-11-21', 'svc-snapshot-2026-11-21.tar.age'].sort(),
    );
  });

  it('prints each recipient with --debug only', async () => {
    const res = await runCli([
      '--replay',
      RECORDING,
      '--out-dir',
      join(work, 'debug'),
      '--encrypt-to',
      alice.recipient,
      '--debug',
    ]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`recipient ${alice.recipient}`);
  });

  it.each([
    [
      'a recipients file line that is no key',
      'not-a-key\n',
      /line 3 of .*recipients-bad\.txt \(SVC_ENCRYPT_TO_FILE\) is not an age X25519 recipient/,
    ],
    [
      'an identity in the recipients file',
      'AGE-SECRET-KEY-1QQQQ\n',
      /line 3 of .* is an age identity \(a secret key\), not a recipient/,
    ],
    [
      'a post-quantum recipient',
      'age1pq1qqqq\n',
      /is a post-quantum hybrid age recipient \(age1pq1…\).*give an age X25519 recipient/,
    ],
    [
      'an SSH key',
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIQ x@y\n',
      /is an SSH public key.*give an age X25519 recipient/,
    ],
  ])('%s: the night is published, said with the file and line, exit 2, no archive', async (_what, line, message) => {
    const file = join(work, 'recipients-bad.txt');
    writeFileSync(file, `# ok\n${alice.recipient}\n${line}`);
    const out = join(work, `bad-${line.length}`);
    const res = await runCli(['--replay', RECORDING, '--out-dir', out, '--quiet'], {
      env: { SVC_ENCRYPT_TO_FILE: file },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).toContain(`published to ${out}, without its archive`);
    // Said once in full, before the run; the end only says where the night is.
    expect(res.stderr.match(new RegExp(message.source, 'g'))).toHaveLength(1);
    expect(res.stderr).not.toContain(line.trim());
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(out, '_snapshot-manifest.json'))).toBe(true);
    expect(existsSync(`${out}.tar.age`)).toBe(false);
  });

  it('a mistyped --encrypt-to: exit 2 naming the flag and what is supported, without repeating it', async () => {
    const typo = `${alice.recipient.slice(0, -1)}${alice.recipient.endsWith('q') ? 'p' : 'q'}`;
    const res = await runCli(['--replay', RECORDING, '--out-dir', join(work, 'typo'), '--encrypt-to', typo]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--encrypt-to #1 is not an age X25519 recipient \(age1…/);
    expect(res.stderr).not.toContain(typo);
  });

  it("holds a snapshot's raw/ as it is on disk", async () => {
    const out = join(work, 'raw-copy');
    const res = await runCli([
      '--replay',
      RECORDING,
      '--out-dir',
      out,
      '--raw',
      '--quiet',
      '--encrypt-to',
      bob.recipient,
    ]);
    expect(res.code).toBe(0);
    const into = join(work, 'raw-copy-extract');
    mkdirSync(into);
    untar(ageDecrypt(bob.file, `${out}.tar.age`), into);
    expect(tree(join(into, 'raw-copy', 'raw'))).toEqual(tree(join(out, 'raw')));
  });

  it('collect archives its raw collection, token-free, as age and tar give it back', async () => {
    const site = await startFakeSite();
    try {
      const out = join(work, 'svc-snapshot-raw-2026-11-21');
      const res = await runCli(
        ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--quiet'],
        { env: { SVC_TOKEN: ALL_TYPES_TOKEN.value, SVC_ENCRYPT_TO_FILE: join(work, 'collect-recipients.txt') } },
      );
      // A recipients file that cannot be read costs the archive only: the collection is published, exit 2.
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(
        /SVC_ENCRYPT_TO_FILE names .*collect-recipients\.txt, which cannot be read \(ENOENT\)/,
      );
      expect(existsSync(join(out, '_collection-manifest.json'))).toBe(true);
      expect(existsSync(`${out}.tar.age`)).toBe(false);
      writeFileSync(join(work, 'collect-recipients.txt'), `${bob.recipient}\n`);
      const again = await runCli(
        ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--quiet'],
        { env: { SVC_TOKEN: ALL_TYPES_TOKEN.value, SVC_ENCRYPT_TO_FILE: join(work, 'collect-recipients.txt') } },
      );
      expect(again.code).toBe(0);
      const tarBytes = ageDecrypt(bob.file, `${out}.tar.age`);
      expect(tarBytes.includes(Buffer.from(ALL_TYPES_TOKEN.value))).toBe(false);
      const into = join(work, 'collect-extract');
      mkdirSync(into);
      untar(tarBytes, into);
      expect(tree(join(into, 'svc-snapshot-raw-2026-11-21'))).toEqual(tree(out));
    } finally {
      await site.close();
    }
  });

  it('--keep deletes an older archive and its signature with their directory, and nothing else', async () => {
    const parent = join(work, 'keep');
    mkdirSync(parent);
    for (const day of ['2026-01-01', '2026-01-02']) {
      const res = await runCli(
        ['--replay', RECORDING, '--out-dir', `svc-snapshot-${day}`, '--encrypt-to', alice.recipient, '--quiet'],
        { cwd: parent },
      );
      expect(res.code).toBe(0);
    }
    writeFileSync(join(parent, 'svc-snapshot-2026-01-01.tar.age.sig'), 'a signature\n');
    writeFileSync(join(parent, 'notes.tar.age'), 'not ours\n');
    const res = await runCli(
      ['--replay', RECORDING, '--out-dir', 'svc-snapshot-2026-01-03', '--encrypt-to', alice.recipient, '--keep', '2'],
      { cwd: parent },
    );
    expect(res.code).toBe(0);
    expect(readdirSync(parent).sort()).toEqual([
      'notes.tar.age',
      'svc-snapshot-2026-01-02',
      'svc-snapshot-2026-01-02.tar.age',
      'svc-snapshot-2026-01-03',
      'svc-snapshot-2026-01-03.tar.age',
    ]);
  });
});

describe.runIf(hasAge() && hasSshKeygen())('--encrypt-to with --sign-key', () => {
  let keys: string;
  afterAll(() => {
    if (keys) removeKeys(keys);
  });

  it('signs the archive bytes into <dir>.tar.age.sig, which ssh-keygen -Y verify accepts', async () => {
    keys = keyDir();
    const key = makeKey(keys, 'nightly');
    const allowed = join(keys, 'allowed_signers');
    writeFileSync(allowed, `${allowedLine(key, 'nightly@site')}\n`);
    const out = join(work, 'signed');
    const res = await runCli(['--replay', RECORDING, '--out-dir', out, '--encrypt-to', alice.recipient, '--quiet'], {
      env: { SVC_SIGN_KEY: key },
    });
    expect(res.code).toBe(0);
    const ssh = sshVerify(allowed, 'nightly@site', `${out}.tar.age.sig`, `${out}.tar.age`);
    expect(ssh.output).toMatch(/Good "svc-snapshot" signature for nightly@site/);
    // Without the key the next archive has no signature: the old one would not match it.
    expect(
      (await runCli(['--replay', RECORDING, '--out-dir', out, '--encrypt-to', alice.recipient, '--quiet'])).code,
    ).toBe(0);
    expect(existsSync(`${out}.tar.age.sig`)).toBe(false);
  });
});

/** Runs `fn` on a fresh tmpfs of `size` (only root may mount one), unmounted after. */
async function onTmpfs(size: string, fn: (mnt: string) => Promise<void>): Promise<void> {
  const mnt = tmpDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', mnt]);
  try {
    await fn(mnt);
  } finally {
    execFileSync('umount', [mnt]);
  }
}

describe.runIf(hasAge() && process.platform === 'linux' && process.getuid?.() === 0)('a disk that fills', () => {
  it('while the archive is written: exit 1 saying so, the snapshot stays published, no partial archive', async () => {
    await onTmpfs('1m', async (mnt) => {
      const res0 = await runCli(['--replay', RECORDING, '--raw', '--out-dir', 'probe', '--quiet'], { cwd: mnt });
      expect(res0.code).toBe(0);
      const du = (flag: string) =>
        Number(
          execFileSync('du', [flag, join(mnt, 'probe')])
            .toString()
            .split('\t')[0],
        );
      // Room for the snapshot (its blocks), and for a third of its archive (about as large as its files' bytes).
      const free = Number(execFileSync('df', ['--output=avail', '-B1', mnt]).toString().trim().split('\n').pop());
      writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free - du('-sB1') - Math.floor(du('-sb') / 3))));
      const res = await runCli(['--replay', RECORDING, '--raw', '--out-dir', 'out', '--encrypt-to', alice.recipient], {
        cwd: mnt,
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        /the output was published to .*\/out, but its archive .*\/out\.tar\.age could not be written \(no space is left on the device \(ENOSPC\)/,
      );
      expect(res.stderr).not.toMatch(/unexpected failure|\n\s+at /);
      expect(readdirSync(mnt).sort()).toEqual(['filler', 'out', 'probe']);
      expect(tree(join(mnt, 'out'))).toEqual(tree(join(mnt, 'probe')));
    });
  });
});
