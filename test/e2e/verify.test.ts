/**
 * `svc-snapshot verify` and `--sign-key` end to end (CONTRACT section 13):
 * real outputs of snapshot, collect and audit, signed, checked by verify and
 * by OpenSSH's ssh-keygen; then copies damaged every way an auditor could
 * receive them. Run `npm run build` first: these tests run bin/.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VerifySummary } from '../../src/summaries/schemas.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { getTestCerts } from '../fake/certs.js';
import { startFakeServer, type FakeServer } from '../fake/server.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { allowedLine, hasSshKeygen, keyDir, makeKey, removeKeys, sshSign, sshVerify } from '../helpers/ssh-keys.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
/** The published JSON Schema of verify --json, as a validator (zod reads JSON Schema). */
const PUBLISHED = z.fromJSONSchema(
  (
    JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'summary-schema.json'), 'utf8')) as {
      $defs: Record<string, Parameters<typeof z.fromJSONSchema>[0]>;
    }
  ).$defs.verify!,
);

let keys: string;
let key: string;
let other: string;
let allowed: string;
let fingerprint: string;
let work: string;
let signed: string;
beforeAll(async () => {
  if (!hasSshKeygen()) return;
  keys = keyDir();
  key = makeKey(keys, 'nightly');
  other = makeKey(keys, 'other');
  allowed = join(keys, 'allowed_signers');
  writeFileSync(allowed, `${allowedLine(key, 'nightly@site', 'namespaces="svc-snapshot"')}\n`);
  fingerprint = /SHA256:\S+/.exec(execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' }))![0];
  work = tmpDir('svc-verify-');
  signed = join(work, 'signed');
  const res = await runCli(['--replay', RECORDING, '--out-dir', signed, '--format', 'csv,xlsx', '--raw', '--quiet'], {
    env: { SVC_SIGN_KEY: key },
  });
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
});
afterAll(() => {
  if (keys) removeKeys(keys);
});

/** `verify --json` of `dirs`: exit code, and the output checked against the published schema. */
async function verify(dirs: string[], extra: string[] = []) {
  const res = await runCli(['verify', ...dirs, '--json', '--quiet', ...extra]);
  const json: unknown = JSON.parse(res.stdout);
  PUBLISHED.parse(json);
  return { code: res.code, summary: VerifySummary.parse(json), stderr: res.stderr };
}

function copy(name: string): string {
  const dir = join(work, name);
  cpSync(signed, dir, { recursive: true });
  return dir;
}

const stateOf = (s: z.infer<typeof VerifySummary>, file: string) => s.dirs[0]!.files.find((f) => f.file === file);
const exportFile = (dir: string, name: string) =>
  readdirSync(dir).find((f) => f.includes(`-${name} (`) && f.endsWith('.json'))!;

describe.runIf(hasSshKeygen())('a signed snapshot', () => {
  it('verifies: every export, spreadsheet and raw file matches, the signature is valid, and ssh-keygen -Y verify accepts it', async () => {
    const { code, summary } = await verify([signed], ['--allowed-signers', allowed]);
    expect(code).toBe(0);
    const d = summary.dirs[0]!;
    expect(d).toMatchObject({ kind: 'snapshot', ok: true, signature: { state: 'valid', key: fingerprint } });
    expect(d.files.every((f) => f.state === 'ok')).toBe(true);
    const names = d.files.map((f) => f.file);
    expect(names.filter((f) => f.endsWith('.csv'))).toHaveLength(15);
    expect(names).toContain('svc-snapshot-2026-11-21.xlsx');
    expect(names).toContain('raw/_collection-manifest.json');
    expect(names.filter((f) => f.startsWith('raw/api-'))).toHaveLength(readdirSync(join(signed, 'raw')).length - 1);
    const ssh = sshVerify(
      allowed,
      'nightly@site',
      join(signed, '_snapshot-manifest.json.sig'),
      join(signed, '_snapshot-manifest.json'),
    );
    expect(ssh.output).toMatch(/Good "svc-snapshot" signature for nightly@site/);
    expect(ssh.code).toBe(0);
  });

  it('works on a read-only copy and writes nothing', async () => {
    const dir = copy('read-only');
    const before = readdirSync(dir, { recursive: true }).map(String).sort();
    const mtime = statSync(dir).mtimeMs;
    execFileSync('chmod', ['-R', 'a-w', dir]);
    try {
      const { code, summary } = await verify([dir]);
      expect(code).toBe(0);
      expect(summary.dirs[0]!.ok).toBe(true);
    } finally {
      execFileSync('chmod', ['-R', 'u+w', dir]);
    }
    expect(readdirSync(dir, { recursive: true }).map(String).sort()).toEqual(before);
    expect(statSync(dir).mtimeMs).toBe(mtime);
  });

  it('names each damaged file: changed, resized, a link, a FIFO or a directory in its place, an extra file; exit 1', async () => {
    const dir = copy('damaged');
    const users = exportFile(dir, 'users');
    const teams = exportFile(dir, 'teams');
    const drives = exportFile(dir, 'drives');
    const projects = exportFile(dir, 'projects');
    const csv = readdirSync(dir).find((f) => f.endsWith('.csv'))!;
    writeFileSync(join(dir, users), readFileSync(join(dir, users), 'utf8').replace('"', "'"));
    writeFileSync(join(dir, csv), `${readFileSync(join(dir, csv), 'utf8')}x`);
    renameSync(join(dir, teams), join(work, 'teams-elsewhere.json'));
    symlinkSync(join(work, 'teams-elsewhere.json'), join(dir, teams));
    unlinkSync(join(dir, drives));
    execFileSync('mkfifo', [join(dir, drives)]);
    unlinkSync(join(dir, projects));
    mkdirSync(join(dir, projects));
    writeFileSync(join(dir, 'notes.txt'), 'added later');
    rmSync(join(dir, 'raw', 'api-users.json'));
    const { code, summary } = await verify([dir]);
    expect(code).toBe(1);
    expect(summary.dirs[0]!.ok).toBe(false);
    expect(stateOf(summary, users)?.state).toBe('sha256 mismatch');
    expect(stateOf(summary, csv)).toMatchObject({
      state: 'size mismatch',
      detail: expect.stringMatching(/the manifest says/),
    });
    expect(stateOf(summary, teams)?.state).toBe('symbolic link');
    expect(stateOf(summary, drives)).toMatchObject({ state: 'not a regular file', detail: 'a FIFO' });
    expect(stateOf(summary, projects)).toMatchObject({ state: 'not a regular file', detail: 'a directory' });
    expect(stateOf(summary, 'notes.txt')?.state).toBe('unexpected');
    expect(stateOf(summary, 'raw/api-users.json')?.state).toBe('missing');
    // The manifest itself was not touched: its signature still holds.
    expect(summary.dirs[0]!.signature).toEqual({ state: 'valid', key: fingerprint });
    const text = await runCli(['verify', dir]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/FAILED: .*users.*sha256 mismatch/);
  });

  it('reports a changed manifest, another key, another namespace, a truncated, binary or huge signature, each saying which', async () => {
    const cases: Array<[string, (dir: string) => void, RegExp, string[]?]> = [
      [
        'changed',
        (d) =>
          writeFileSync(
            join(d, '_snapshot-manifest.json'),
            readFileSync(join(d, '_snapshot-manifest.json'), 'utf8').replace('"complete": true', '"complete": false'),
          ),
        /does not match the manifest/,
      ],
      [
        'other-key',
        (d) => sshSign(other, join(d, '_snapshot-manifest.json')),
        /valid signature, but its key is not listed/,
        ['--allowed-signers', allowed],
      ],
      [
        'namespace',
        (d) => sshSign(key, join(d, '_snapshot-manifest.json'), 'file'),
        /namespace "file", not "svc-snapshot"/,
      ],
      [
        'truncated',
        (d) =>
          writeFileSync(
            join(d, '_snapshot-manifest.json.sig'),
            readFileSync(join(d, '_snapshot-manifest.json.sig'), 'utf8').slice(0, 200),
          ),
        /truncated/,
      ],
      ['binary', (d) => writeFileSync(join(d, '_snapshot-manifest.json.sig'), Buffer.from([0, 1, 2, 255])), /binary/],
      [
        'huge',
        (d) => writeFileSync(join(d, '_snapshot-manifest.json.sig'), Buffer.alloc(5 * 1024 * 1024, 65)),
        /larger than 16 KiB/,
      ],
      ['rsa', (d) => sshSign(makeKey(keys, 'rsa-signer', 'rsa'), join(d, '_snapshot-manifest.json')), /RSA key/],
    ];
    for (const [name, damage, reason, extra] of cases) {
      const dir = copy(`sig-${name}`);
      if (name !== 'changed' && name !== 'truncated' && name !== 'binary' && name !== 'huge')
        rmSync(join(dir, '_snapshot-manifest.json.sig'));
      damage(dir);
      const { code, summary } = await verify([dir], extra);
      expect(code, name).toBe(1);
      expect(summary.dirs[0]!.signature.reason, name).toMatch(reason);
    }
  });

  it('a signature ssh-keygen -Y sign writes is accepted; an unsigned snapshot is reported unsigned (exit 0), or refused with --allowed-signers', async () => {
    const dir = copy('ssh-signed');
    rmSync(join(dir, '_snapshot-manifest.json.sig'));
    expect((await verify([dir])).summary.dirs[0]!.signature).toEqual({ state: 'unsigned', key: null });
    const refused = await verify([dir], ['--allowed-signers', allowed]);
    expect(refused.code).toBe(1);
    expect(refused.summary.dirs[0]!.signature.reason).toMatch(/--allowed-signers requires one/);
    sshSign(key, join(dir, '_snapshot-manifest.json'));
    const res = await verify([dir], ['--allowed-signers', allowed]);
    expect(res.code).toBe(0);
    expect(res.summary.dirs[0]!.signature).toMatchObject({ state: 'valid', key: fingerprint });
  });
});

describe.runIf(hasSshKeygen())('files the manifest does not cover, and names it should not hold', () => {
  it("convert's spreadsheets written later are not covered (a warning, exit 0); a name with .. or / is never opened", async () => {
    const plain = join(work, 'plain');
    expect((await runCli(['--replay', RECORDING, '--out-dir', plain, '--quiet'])).code).toBe(0);
    expect((await runCli(['convert', plain, '--quiet'])).code).toBe(0);
    const later = await verify([plain]);
    expect(later.code).toBe(0);
    expect(later.summary.dirs[0]!.files.filter((f) => f.state === 'not covered')).toHaveLength(16);
    const manifestFile = join(plain, '_snapshot-manifest.json');
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as { exports: Array<{ file: string }> };
    m.exports[0]!.file = '../signed/_snapshot-manifest.json';
    m.exports[1]!.file = '/etc/passwd';
    writeFileSync(manifestFile, JSON.stringify(m, null, 2));
    const unsafe = await verify([plain]);
    expect(unsafe.code).toBe(1);
    expect(unsafe.summary.dirs[0]!.files.filter((f) => f.state === 'unsafe name').map((f) => f.file)).toEqual([
      '../signed/_snapshot-manifest.json',
      '/etc/passwd',
    ]);
  });
});

describe('a file the manifest names more than once', () => {
  type Json = Record<string, Array<Record<string, unknown>>>;
  /** A copy of `from` in a directory of its own, its manifest changed by `edit`. */
  function edited(from: string, manifestName: string, edit: (m: Json) => void): string {
    const dir = join(tmpDir('svc-verify-twice-'), 'out');
    cpSync(from, dir, { recursive: true });
    rmSync(join(dir, `${manifestName}.sig`), { force: true });
    const m = JSON.parse(readFileSync(join(dir, manifestName), 'utf8')) as Json;
    edit(m);
    writeFileSync(join(dir, manifestName), JSON.stringify(m, null, 2));
    return dir;
  }
  const other = 'f'.repeat(64);
  let snapshot: string;
  beforeAll(async () => {
    snapshot = join(tmpDir('svc-verify-twice-'), 'snap');
    const res = await runCli(['--replay', RECORDING, '--out-dir', snapshot, '--quiet']);
    expect(res.code).toBe(0);
  });

  it('a snapshot manifest naming an export or a file twice is damaged: the directory fails (exit 1), agreeing or not', async () => {
    const users = exportFile(snapshot, 'users');
    const size = statSync(join(snapshot, users)).size;
    const twice = /^has a _snapshot-manifest\.json that (lists export users|names the file .*users.* twice)/;
    const cases: Array<[string, (m: Json) => void]> = [
      [
        'second export entry wrong',
        (m) => m.exports!.push({ ...m.exports!.find((e) => e.file === users)!, sha256: other }),
      ],
      [
        'first export entry wrong',
        (m) => m.exports!.unshift({ ...m.exports!.find((e) => e.file === users)!, sha256: other }),
      ],
      ['files entry wrong', (m) => (m.files = [{ name: users, bytes: size, sha256: other }])],
      [
        'two files entries of different sizes',
        (m) => {
          const e = { name: users, bytes: size, sha256: m.exports!.find((x) => x.file === users)!.sha256 };
          m.files = [e, { ...e, bytes: 1 }];
        },
      ],
      [
        'an export named twice with its own hash, and in exports and files alike',
        (m) => {
          const e = m.exports!.find((x) => x.file === users)!;
          m.exports!.push({ ...e });
          m.files = [{ name: users, bytes: size, sha256: e.sha256 }];
        },
      ],
    ];
    for (const [name, edit] of cases) {
      const dir = edited(snapshot, '_snapshot-manifest.json', edit);
      const { code, summary } = await verify([dir]);
      expect(code, name).toBe(1);
      expect(summary.dirs[0], name).toMatchObject({ ok: false, files: [] });
      expect(summary.dirs[0]!.error, name).toMatch(twice);
      expect(summary.dirs[0]!.error, name).toMatch(/; the snapshot is damaged$/);
    }
    const text = await runCli(['verify', edited(snapshot, '_snapshot-manifest.json', cases[0]![1])]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('FAILED: has a _snapshot-manifest.json that lists export users twice');
  });

  it('a raw collection naming one file in two routes with different hashes fails it', async () => {
    const dir = edited(RECORDING, '_collection-manifest.json', (m) => {
      const r = m.routes!.find((x) => x.file === 'api-users.json')!;
      m.routes!.push({ ...r, route: 'GET /api/users?again', sha256: other });
    });
    const { code, summary } = await verify([dir]);
    expect(code).toBe(1);
    expect(stateOf(summary, 'api-users.json')).toMatchObject({
      state: 'conflicting entries',
      detail: expect.stringMatching(
        /different sha256 \(routes\[1\]: sha256 [0-9a-f]{12}…, \d+ bytes; routes\[20\]: sha256 ffffffffffff…/,
      ),
    });
  });

  it("an audit collection names a query's, report's and objects' file twice: passes while they agree, fails when one disagrees", async () => {
    const audit = join(REPO_ROOT, 'recordings', 'audit', 'svc-snapshot-audit-2026-11-21');
    const same = await verify([edited(audit, '_audit-manifest.json', () => {})]);
    expect(same.code).toBe(0);
    const objects = edited(audit, '_audit-manifest.json', (m) => (m.objects![0]!.sha256 = other));
    const o = await verify([objects]);
    expect(o.code).toBe(1);
    expect(o.summary.dirs[0]!.files.filter((f) => f.state !== 'ok')).toEqual([
      {
        file: 'objects-user-2026-11-30.json',
        state: 'conflicting entries',
        detail: expect.stringMatching(/different sha256 \(routes\[\d+\]: .*; objects\[0\]: /),
      },
    ]);
    const reports = edited(audit, '_audit-manifest.json', (m) => (m.reports![0]!.bytes = 1));
    const r = await verify([reports]);
    expect(r.code).toBe(1);
    expect(r.summary.dirs[0]!.files.filter((f) => f.state !== 'ok')).toEqual([
      {
        file: 'reports-monthly-access-2026-10-01-2026-11-30.xlsx',
        state: 'conflicting entries',
        detail: expect.stringMatching(/different size/),
      },
    ]);
  });
});

describe('bad input', () => {
  it('no manifest, a missing path or / is a usage error (exit 2); two manifests or one that is not JSON fail the directory (exit 1)', async () => {
    const dir = tmpDir('svc-verify-bad-');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    for (const target of [empty, '/', join(dir, 'missing')]) {
      const res = await runCli(['verify', target]);
      expect(res.code, target).toBe(2);
      expect(res.stderr).toMatch(/holds no manifest of svc-snapshot|does not exist/);
      expect(res.stdout).toBe('');
    }
    const two = join(dir, 'two');
    mkdirSync(two);
    writeFileSync(join(two, '_snapshot-manifest.json'), '{}');
    writeFileSync(join(two, '_collection-manifest.json'), '{}');
    const notJson = join(dir, 'not-json');
    mkdirSync(notJson);
    writeFileSync(join(notJson, '_audit-manifest.json'), '{"kind": "audit",');
    const res = await verify([two, notJson]);
    expect(res.code).toBe(1);
    expect(res.summary.dirs.map((d) => [d.kind, d.ok, d.error])).toEqual([
      [
        null,
        false,
        expect.stringMatching(/holds 2 manifests \(_snapshot-manifest\.json, _collection-manifest\.json\)/),
      ],
      ['audit', false, expect.stringMatching(/_audit-manifest\.json is not valid JSON/)],
    ]);
  });

  it('has --help with examples; no directory, or a malformed --allowed-signers, is a usage error before anything is read', async () => {
    const help = await runCli(['verify', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--allowed-signers <file>[\s\S]*Examples:\n {2}\$ svc-snapshot verify/);
    expect((await runCli(['verify'])).code).toBe(2);
    const dir = tmpDir('svc-verify-signers-');
    writeFileSync(join(dir, 'allowed'), '# comment\r\nops@site namespaces="svc-snapshot" ssh-ed25519\r\n');
    const res = await runCli(['verify', RECORDING, '--allowed-signers', join(dir, 'allowed')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/allowed line 2 is malformed: the key is not base64/);
    expect(res.stdout).toBe('');
  });

  it.runIf(hasSshKeygen())(
    'a bad --sign-key stops the run before anything is written (exit 2), naming the file and never its content',
    async () => {
      const dir = tmpDir('svc-verify-key-');
      const open = join(dir, 'open-key');
      cpSync(key, open);
      chmodSync(open, 0o644);
      const out = join(dir, 'out');
      const res = await runCli(['--replay', RECORDING, '--out-dir', out, '--sign-key', open]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(
        `the signing key ${open} (--sign-key) can be read or written by its group or others (mode 0644`,
      );
      const body = readFileSync(key, 'utf8').split('\n')[2]!;
      expect(res.stderr).not.toContain(body);
      expect(readdirSync(dir)).toEqual(['open-key']);
    },
  );
});

describe.runIf(hasSshKeygen())('collect and audit sign their manifests', () => {
  let site: FakeSite;
  let audit: FakeServer;
  beforeAll(async () => {
    site = await startFakeSite();
    audit = await startFakeServer(createAuditBackend().handlers, { tls: true });
  });
  afterAll(async () => {
    await site?.close();
    await audit?.close();
  });

  it('a signed raw collection and a signed audit collection verify, and ssh-keygen accepts both', async () => {
    const dir = tmpDir('svc-verify-collect-');
    const raw = join(dir, 'raw');
    const c = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', raw, '--sign-key', key, '--quiet'],
      { env: { SVC_TOKEN: ALL_TYPES_TOKEN.value } },
    );
    expect(c.code).toBe(0);
    const a = await runCli(
      [
        'audit',
        '--audit-url',
        audit.url,
        '--ca-file',
        getTestCerts().caFile,
        '--out-dir',
        join(dir, 'audit'),
        '--quiet',
      ],
      { env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN, SVC_SIGN_KEY: key } },
    );
    expect(a.code).toBe(0);
    const res = await verify([raw, join(dir, 'audit')], ['--allowed-signers', allowed]);
    expect(res.code).toBe(0);
    expect(res.summary.dirs.map((d) => [d.kind, d.ok, d.signature.state, d.signature.key])).toEqual([
      ['collection', true, 'valid', fingerprint],
      ['audit', true, 'valid', fingerprint],
    ]);
    expect(res.summary.dirs[1]!.files.length).toBeGreaterThan(5);
    for (const [d, m] of [
      [raw, '_collection-manifest.json'],
      [join(dir, 'audit'), '_audit-manifest.json'],
    ] as const) {
      expect(sshVerify(allowed, 'nightly@site', join(d, `${m}.sig`), join(d, m)).code).toBe(0);
    }
    // Publishing again over a signed output replaces it: the .sig is the tool's own file.
    const again = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', raw, '--quiet'],
      { env: { SVC_TOKEN: ALL_TYPES_TOKEN.value } },
    );
    expect(again.code).toBe(0);
    expect(readdirSync(raw)).not.toContain('_collection-manifest.json.sig');
  });
});
