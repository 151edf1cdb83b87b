/**
 * Signatures cross-checked against OpenSSH itself (CONTRACT section 13):
 * what this tool signs, `ssh-keygen -Y verify` accepts; what `ssh-keygen -Y
 * sign` writes, this tool accepts; every other signature is refused with a
 * message that says why. The key file's checks refuse anything but an
 * unencrypted Ed25519 key readable by its owner alone, without showing it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { secretInFileBytes, secretMatcher } from '../../src/publish/scan.js';
import { findSigner, parseAllowedSigners, readAllowedSigners } from '../../src/sign/allowed-signers.js';
import { clearSigningSecrets, loadSigningKey } from '../../src/sign/key.js';
import { checkSignature, signMessage } from '../../src/sign/sshsig.js';
import { clearSecrets, redact } from '../../src/util/redact.js';
import { allowedLine, hasSshKeygen, keyDir, makeKey, removeKeys, sshSign, sshVerify } from '../helpers/ssh-keys.js';

const MANIFEST = Buffer.from('{\n  "kind": "snapshot",\n  "time": "2026-11-21T02:00:00.000Z"\n}\n');

let dir: string;
let key: string;
beforeAll(() => {
  dir = keyDir();
  key = makeKey(dir, 'nightly');
});
afterAll(() => removeKeys(dir));
afterEach(() => {
  clearSigningSecrets();
  clearSecrets();
});

/** The manifest and a signature file beside it, in the key directory. */
function files(name: string, message: Buffer = MANIFEST): { manifest: string; sig: string } {
  const manifest = join(dir, name);
  writeFileSync(manifest, message);
  return { manifest, sig: `${manifest}.sig` };
}

describe.runIf(hasSshKeygen())('signatures, cross-checked with ssh-keygen', () => {
  it('a signature this tool writes is accepted by ssh-keygen -Y verify, and is byte for byte the one ssh-keygen writes', () => {
    const { manifest, sig } = files('m1.json');
    const signed = signMessage(MANIFEST, loadSigningKey(key, '--sign-key'));
    writeFileSync(sig, signed);
    const allowed = join(dir, 'allowed1');
    writeFileSync(allowed, `${allowedLine(key, 'nightly@site', 'namespaces="svc-snapshot"')}\n`);
    const res = sshVerify(allowed, 'nightly@site', sig, manifest);
    expect(res.output).toMatch(/Good "svc-snapshot" signature for nightly@site/);
    expect(res.code).toBe(0);
    // Ed25519 is deterministic: the same key over the same bytes gives the same file.
    sshSign(key, manifest);
    expect(readFileSync(sig, 'utf8')).toBe(signed);
  });

  it('a signature ssh-keygen -Y sign -n svc-snapshot writes is accepted, with the fingerprint ssh-keygen -l prints', () => {
    const { manifest, sig } = files('m2.json');
    sshSign(key, manifest);
    const check = checkSignature(readFileSync(sig), MANIFEST);
    expect(check.valid).toBe(true);
    const printed = /SHA256:[A-Za-z0-9+/]+/.exec(
      // ssh-keygen -l -f key.pub: "256 SHA256:… comment (ED25519)"
      execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' }),
    )?.[0];
    expect(check.fingerprint).toBe(printed);
  });

  it('refuses a signature over a changed manifest, saying the manifest was changed', () => {
    const { manifest, sig } = files('m3.json');
    sshSign(key, manifest);
    const check = checkSignature(readFileSync(sig), Buffer.concat([MANIFEST, Buffer.from(' ')]));
    expect(check).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/does not match the manifest: the manifest was changed/),
    });
  });

  it('refuses a signature made for another namespace, naming it', () => {
    const { manifest, sig } = files('m4.json');
    sshSign(key, manifest, 'file');
    expect(checkSignature(readFileSync(sig), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/namespace "file", not "svc-snapshot"/),
    });
  });

  it('refuses a truncated signature, and a binary or huge .sig, without reading past the cap', () => {
    const { manifest, sig } = files('m5.json');
    sshSign(key, manifest);
    const text = readFileSync(sig, 'utf8');
    expect(checkSignature(Buffer.from(text.slice(0, 120)), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/truncated/),
    });
    const lines = text.split('\n');
    const cut = [lines[0], lines[1], lines[2]!.slice(0, 40), lines.at(-2), ''].join('\n');
    expect(checkSignature(Buffer.from(cut), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/truncated|damaged/),
    });
    expect(checkSignature(Buffer.from([0x00, 0xff, 0x13, 0x37]), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/binary/),
    });
    expect(checkSignature(Buffer.alloc(20 * 1024, 0x41), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/larger than 16 KiB/),
    });
  });

  it.each([
    ['rsa', /RSA key \((ssh-rsa|rsa-sha2-512)\)/],
    ['ecdsa', /ECDSA key \(ecdsa-sha2-nistp256\)/],
  ])('refuses a signature made with an %s key, saying which', (type, reason) => {
    const other = makeKey(dir, `other-${type}`, type);
    const { manifest, sig } = files(`m-${type}.json`);
    sshSign(other, manifest);
    expect(checkSignature(readFileSync(sig), MANIFEST)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(reason),
    });
  });

  it('a valid signature by a key not in allowed_signers is not allowed, and one listed for another namespace neither', () => {
    const other = makeKey(dir, 'other-ed');
    const { manifest, sig } = files('m6.json');
    sshSign(other, manifest);
    const check = checkSignature(readFileSync(sig), MANIFEST);
    if (!check.valid) throw new Error('expected a valid signature');
    const allowed = {
      file: 'allowed',
      signers: parseAllowedSigners(`${allowedLine(key, 'nightly@site')}\n`, 'allowed'),
    };
    expect(findSigner(allowed, check.publicBlob, 'svc-snapshot', new Date())).toEqual({
      ok: false,
      reason: 'its key is not listed in allowed',
    });
    const scoped = {
      file: 'allowed',
      signers: parseAllowedSigners(`${allowedLine(other, 'x@site', 'namespaces="git,file"')}\n`, 'allowed'),
    };
    expect(findSigner(scoped, check.publicBlob, 'svc-snapshot', new Date())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/line 1 lists the key for namespaces "git,file", not "svc-snapshot"/),
    });
  });
});

describe.runIf(hasSshKeygen())('the signing key file', () => {
  const refusal = (file: string): string => {
    try {
      loadSigningKey(file, '--sign-key');
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      return (err as Error).message;
    }
    throw new Error('the key was accepted');
  };

  it.each<[string, () => string, RegExp]>([
    ['a directory', () => (mkdirSync(join(dir, 'adir'), { recursive: true }), join(dir, 'adir')), /is a directory/],
    ['empty', () => (writeFileSync(join(dir, 'empty'), '', { mode: 0o600 }), join(dir, 'empty')), /is empty/],
    ['missing', () => join(dir, 'nothing-here'), /does not exist/],
    [
      'a PEM RSA key',
      () => makeKey(dir, 'pem-rsa', 'rsa', { pem: true }),
      /holds a PEM "RSA PRIVATE KEY", not an OpenSSH private key/,
    ],
    [
      'encrypted',
      () => makeKey(dir, 'encrypted', 'ed25519', { passphrase: 'correct horse battery' }),
      /is encrypted with a passphrase \(aes256-ctr\)/,
    ],
    ['an RSA key', () => makeKey(dir, 'rsa', 'rsa'), /holds an RSA key \(ssh-rsa\); only Ed25519 keys sign/],
    ['an ECDSA key', () => makeKey(dir, 'ecdsa', 'ecdsa'), /holds an ECDSA key \(ecdsa-sha2-nistp256\)/],
    [
      'world-readable',
      () => (copyFileSync(key, join(dir, 'open')), chmodSync(join(dir, 'open'), 0o644), join(dir, 'open')),
      /mode 0644, a private key must be 0600 or stricter/,
    ],
    [
      'group-readable',
      () => (copyFileSync(key, join(dir, 'group')), chmodSync(join(dir, 'group'), 0o640), join(dir, 'group')),
      /mode 0640/,
    ],
    ['a symbolic link', () => (symlinkSync(key, join(dir, 'link')), join(dir, 'link')), /is a symbolic link/],
    // Only root can give a file away; elsewhere the row is left out.
    ...(process.getuid?.() === 0
      ? [
          [
            'owned by another user',
            () => (copyFileSync(key, join(dir, 'theirs')), chownSync(join(dir, 'theirs'), 1, 1), join(dir, 'theirs')),
            /is owned by user id 1, not by the user running svc-snapshot/,
          ] as [string, () => string, RegExp],
        ]
      : []),
    [
      'the public key',
      () => (copyFileSync(`${key}.pub`, join(dir, 'pub')), chmodSync(join(dir, 'pub'), 0o600), join(dir, 'pub')),
      /is a public key; give the private key/,
    ],
    [
      'a text file',
      () => (writeFileSync(join(dir, 'text'), 'hello\n', { mode: 0o600 }), join(dir, 'text')),
      /is not an OpenSSH private key/,
    ],
  ])('%s is a usage error naming the file, never its content', (_what, make, reason) => {
    const file = make();
    const message = refusal(file);
    expect(message).toMatch(reason);
    expect(message).toContain(file);
    expect(message).not.toMatch(/[A-Za-z0-9+/]{40,}/);
  });

  it('an empty --sign-key is a usage error saying so, not a file that does not exist', () => {
    expect(refusal('')).toMatch(/^--sign-key is empty; give the path of an unencrypted OpenSSH Ed25519 private key/);
  });

  it('0400 is accepted, and the key text, its seed in hex and base64 are secrets: redacted and found by the pre-publish scan', async () => {
    const strict = join(dir, 'strict');
    copyFileSync(key, strict);
    chmodSync(strict, 0o400);
    loadSigningKey(strict, 'SVC_SIGN_KEY');
    chmodSync(strict, 0o600);
    const matcher = secretMatcher([]);
    expect(matcher).not.toBeNull();
    const leaked = join(dir, 'leaked.json');
    writeFileSync(leaked, JSON.stringify({ error: readFileSync(key, 'utf8') }));
    expect(await secretInFileBytes(leaked, matcher!)).toBe('signing key');
    writeFileSync(leaked, '{"note": "nothing secret here"}');
    expect(await secretInFileBytes(leaked, matcher!)).toBeNull();
    expect(redact(readFileSync(key, 'utf8'))).toContain('[redacted]');
  });
});

describe('allowed_signers', () => {
  const KEY = 'AAAAC3NzaC1lZDI1NTE5AAAAIHl2aNgGA7L9B6zvyGa2nd9V3bN3j3Ihw6CnYPFGt+Wf';

  it('reads comments, options, quoted principals and CRLF line ends', () => {
    const text = [
      '# the nightly job',
      '',
      `nightly@site ssh-ed25519 ${KEY} comment after the key`,
      `"ops team,backup@site" namespaces="svc-snapshot,git",valid-after="20260101",valid-before="20371231Z" ssh-ed25519 ${KEY}`,
      `ca@site cert-authority ssh-ed25519 ${KEY}`,
    ].join('\r\n');
    const signers = parseAllowedSigners(text, 'allowed');
    expect(signers.map((s) => [s.line, s.principals, s.namespaces ?? null, s.certAuthority])).toEqual([
      [3, 'nightly@site', null, false],
      [4, 'ops team,backup@site', 'svc-snapshot,git', false],
      [5, 'ca@site', null, true],
    ]);
    expect(signers[1]!.validBefore?.toISOString()).toBe('2037-12-31T00:00:00.000Z');
  });

  it.each([
    [`nightly@site`, /line 1 is malformed: too few fields/],
    [`nightly@site ssh-ed25519 not-base64!`, /line 1 is malformed: the key is not base64/],
    [
      `nightly@site frobnicate ssh-ed25519 ${KEY}`,
      /line 1 is malformed: "frobnicate" is neither a key type nor an option/,
    ],
    [`nightly@site valid-before="tomorrow" ssh-ed25519 ${KEY}`, /valid-before "tomorrow" is not a time/],
    [`nightly@site ssh-rsa ${KEY}`, /the key is not a ssh-rsa key/],
    [`nightly@site namespaces="svc-snapshot ssh-ed25519 ${KEY}`, /a quote is not closed/],
  ])('a malformed line is a usage error with its line number: %s', (line, message) => {
    expect(() => parseAllowedSigners(`# ok\n${line}\n`.split('\n').slice(1).join('\n'), 'allowed')).toThrow(message);
  });

  it('a line past its valid-before, or not yet valid, does not allow the key; a cert-authority line never allows a plain key', () => {
    const blob = Buffer.from(KEY, 'base64');
    const at = new Date('2027-06-01T00:00:00Z');
    const allowed = (line: string) => ({ file: 'allowed', signers: parseAllowedSigners(line, 'allowed') });
    expect(
      findSigner(allowed(`a valid-before="20270101Z" ssh-ed25519 ${KEY}`), blob, 'svc-snapshot', at),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/valid only before 2027-01-01/) });
    expect(findSigner(allowed(`a valid-after="20280101Z" ssh-ed25519 ${KEY}`), blob, 'svc-snapshot', at)).toMatchObject(
      { ok: false, reason: expect.stringMatching(/valid only after 2028-01-01/) },
    );
    expect(findSigner(allowed(`a cert-authority ssh-ed25519 ${KEY}`), blob, 'svc-snapshot', at)).toMatchObject({
      ok: false,
    });
    expect(findSigner(allowed(`a namespaces="svc-*,!git" ssh-ed25519 ${KEY}`), blob, 'svc-snapshot', at)).toMatchObject(
      { ok: true, principals: 'a', line: 1 },
    );
  });

  it('a missing file or a directory is a usage error naming it', () => {
    expect(() => readAllowedSigners('/nonexistent/allowed')).toThrow(
      /--allowed-signers \/nonexistent\/allowed does not exist/,
    );
    expect(() => readAllowedSigners('/tmp')).toThrow(/is not a regular file/);
  });
});
