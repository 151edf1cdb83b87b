/**
 * The signing key of `--sign-key` / SVC_SIGN_KEY (docs/verify.md): an
 * unencrypted OpenSSH Ed25519 private key ("openssh-key-v1", as
 * `ssh-keygen -t ed25519 -N ''` writes it), parsed here with Node's crypto
 * alone. The key is a secret like a token: no message ever holds any of the
 * file's content, and its secret material is registered so that redaction
 * and the pre-publish scan look for it (knownSigningSecrets).
 */
import { lstatSync, type Stats } from 'node:fs';
import { readSmallFile } from '../util/safe-read.js';
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { registerSecret } from '../util/redact.js';
import { WireError, WireReader, describeKeyType, ed25519Blob, fingerprint } from './wire.js';

/** A private key file is a few hundred bytes; anything past this is not one. */
const MAX_KEY_BYTES = 64 * 1024;
const MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
const BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----';
const END = '-----END OPENSSH PRIVATE KEY-----';

export interface SigningKey {
  /** The public key blob (string "ssh-ed25519", string key). */
  readonly publicBlob: Buffer;
  /** `SHA256:…`, as ssh-keygen -l prints it. */
  readonly fingerprint: string;
  /** The Ed25519 signature of `data`. */
  sign(data: Buffer): Buffer;
}

/** A usage error about the key file: names the file and what to do, never its content. */
function refused(file: string, from: string, problem: string): UsageError {
  return new UsageError(
    `the signing key ${escapeControl(file)} (${from}) ${problem}; give an unencrypted OpenSSH Ed25519 private key ` +
      `readable by you alone, e.g. made with: ssh-keygen -t ed25519 -N '' -f <file> (then chmod 600 <file>)`,
  );
}

/**
 * Reads and checks the key file: a regular file (not a link), owned by this
 * user, mode 0600 or stricter, holding one unencrypted Ed25519 key in the
 * OpenSSH format. Anything else is a usage error naming the file (exit 2).
 */
export function loadSigningKey(file: string, from: string): SigningKey {
  const bytes = readKeyFile(file, from);
  const text = bytes.toString('latin1');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) {
    const other = /-----BEGIN ([A-Z0-9 ]{1,40})-----/.exec(text)?.[1];
    if (/^(ssh-|ecdsa-|sk-)\S+ [A-Za-z0-9+/=]+/.test(text))
      throw refused(file, from, 'is a public key; give the private key (the file without .pub)');
    if (other !== undefined)
      throw refused(file, from, `holds a PEM "${other}", not an OpenSSH private key ("OPENSSH PRIVATE KEY")`);
    throw refused(file, from, 'is not an OpenSSH private key');
  }
  const body = text.slice(begin + BEGIN.length, end);
  const b64 = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64))
    throw refused(file, from, 'is not an OpenSSH private key (its body is not base64)');
  const blob = Buffer.from(b64, 'base64');
  let key: { publicBlob: Buffer; seed: Buffer; publicKey: Buffer; seedAt: number };
  try {
    key = parseOpensshKey(blob, file, from);
  } catch (err) {
    if (err instanceof WireError) throw refused(file, from, 'is a damaged or truncated OpenSSH private key');
    throw err;
  }
  for (const form of signingSecretForms(key.seed, body, key.seedAt)) {
    signingSecrets.add(form);
    registerSecret(form);
  }
  const privateKey: KeyObject = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: key.seed.toString('base64url'), x: key.publicKey.toString('base64url') },
    format: 'jwk',
  });
  return {
    publicBlob: key.publicBlob,
    fingerprint: fingerprint(key.publicBlob),
    sign: (data) => sign(null, data, privateKey),
  };
}

function readKeyFile(file: string, from: string): Buffer {
  if (file === '')
    throw new UsageError(`${from} is empty; give the path of an unencrypted OpenSSH Ed25519 private key`);
  let info;
  try {
    info = lstatSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refused(file, from, code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`);
  }
  if (info.isSymbolicLink())
    throw refused(
      file,
      from,
      'is a symbolic link (give the key file itself, so that its owner and mode are the ones checked)',
    );
  if (info.isDirectory()) throw refused(file, from, 'is a directory');
  if (!info.isFile()) throw refused(file, from, 'is not a regular file');
  const read = readSmallFile(file, {
    maxBytes: MAX_KEY_BYTES,
    followLinks: false,
    check: (st) => checkOwner(st, file, from),
  });
  if (Buffer.isBuffer(read)) return read;
  if (read.problem === 'not a regular file') throw refused(file, from, 'is not a regular file');
  if (read.problem === 'too large')
    throw refused(file, from, `is larger than ${MAX_KEY_BYTES / 1024} KiB, far larger than a private key`);
  throw refused(file, from, `cannot be opened (${read.code})`);
}

/** A private key is its owner's alone, and holds something. */
function checkOwner(st: Stats, file: string, from: string): void {
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw refused(file, from, `is owned by user id ${st.uid}, not by the user running svc-snapshot (${uid})`);
  if ((st.mode & 0o077) !== 0) {
    throw refused(
      file,
      from,
      `can be read or written by its group or others (mode ` +
        `${(st.mode & 0o777).toString(8).padStart(4, '0')}, a private key must be 0600 or stricter)`,
    );
  }
  if (st.size === 0) throw refused(file, from, 'is empty');
}

/** The fields of an "openssh-key-v1" blob holding one unencrypted Ed25519 key (PROTOCOL.key of OpenSSH). */
function parseOpensshKey(blob: Buffer, file: string, from: string) {
  if (blob.length < MAGIC.length || !blob.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw refused(file, from, 'is not an OpenSSH private key (no openssh-key-v1 header)');
  }
  const r = new WireReader(blob.subarray(MAGIC.length));
  const cipher = r.text();
  const kdf = r.text();
  r.string(); // kdf options
  if (cipher !== 'none' || kdf !== 'none') {
    throw refused(
      file,
      from,
      `is encrypted with a passphrase (${cipher}); an unattended job cannot type one, so use ` +
        `a key without passphrase kept readable by its owner only`,
    );
  }
  const count = r.uint32();
  if (count !== 1) throw refused(file, from, `holds ${count} keys, not one`);
  const publicBlob = r.string();
  const type = new WireReader(publicBlob).text();
  if (type !== 'ssh-ed25519')
    throw refused(file, from, `holds ${describeKeyType(type)}; only Ed25519 keys sign (ssh-keygen -t ed25519)`);
  // Where the private part starts in the blob (after its length), to find the seed's place in the file's base64 text.
  const privStart = MAGIC.length + r.offset + 4;
  const priv = new WireReader(r.string());
  if (priv.uint32() !== priv.uint32())
    throw refused(file, from, 'is a damaged OpenSSH private key (its check numbers differ)');
  if (priv.text() !== 'ssh-ed25519')
    throw refused(file, from, 'is a damaged OpenSSH private key (its private part is not Ed25519)');
  const publicKey = priv.string();
  const seedAt = privStart + priv.offset + 4;
  const secret = priv.string();
  if (
    publicKey.length !== 32 ||
    secret.length !== 64 ||
    !secret.subarray(32).equals(publicKey) ||
    !ed25519Blob(publicKey).equals(publicBlob)
  ) {
    throw refused(file, from, 'is a damaged OpenSSH private key (its Ed25519 parts do not agree)');
  }
  return { publicBlob, publicKey, seed: Buffer.from(secret.subarray(0, 32)), seedAt };
}

const signingSecrets = new Set<string>();

/** Every spelling of the signing key's secret registered so far: the pre-publish scan looks for them with the tokens. */
export function knownSigningSecrets(): readonly string[] {
  return [...signingSecrets];
}

/** Only for tests. */
export function clearSigningSecrets(): void {
  signingSecrets.clear();
}

/**
 * The texts in which the key's secret (the Ed25519 seed) would show if it
 * leaked into a file or a message: hex, base64 and base64url of it (the
 * base64 forms cut to whole 3-byte groups, so that they also match the seed
 * followed by the public key), and the runs of the key file's own base64
 * text that encode nothing but seed bytes, line by line.
 */
function signingSecretForms(seed: Buffer, fileBody: string, seedAt: number): string[] {
  const forms = new Set<string>([
    seed.toString('hex'),
    seed.toString('base64').slice(0, 40),
    seed.toString('base64url').slice(0, 40),
  ]);
  const lines = fileBody
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const first = Math.ceil(seedAt / 3) * 4;
  const last = Math.floor((seedAt + seed.length) / 3) * 4;
  let offset = 0;
  for (const line of lines) {
    const from = Math.max(first, offset);
    const to = Math.min(last, offset + line.length);
    if (to - from >= 16) forms.add(line.slice(from - offset, to - offset));
    offset += line.length;
  }
  return [...forms];
}
