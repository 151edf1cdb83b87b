/**
 * SSHSIG signatures (OpenSSH's PROTOCOL.sshsig), as `ssh-keygen -Y sign`
 * writes them and `ssh-keygen -Y verify` checks them: the signed data is
 * "SSHSIG", the namespace, a reserved string, the hash algorithm and the
 * hash of the message; the signature file is the armored blob. Ed25519 only,
 * with Node's crypto.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { WireError, WireReader, blobKeyType, describeKeyType, fingerprint, sshString, uint32 } from './wire.js';
import type { SigningKey } from './key.js';

/** The namespace every signature of this tool is made in (`ssh-keygen -Y … -n svc-snapshot`). */
export const SIGNATURE_NAMESPACE = 'svc-snapshot';
/** A signature file is a few hundred bytes (an RSA one a few KB); a larger `.sig` is refused unread. */
export const MAX_SIGNATURE_BYTES = 16 * 1024;

const MAGIC = Buffer.from('SSHSIG', 'latin1');
const BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';

/** A message, or the digests of one too large to hold (a file hashed as it was written or read). */
export type Signed = Buffer | { readonly sha256?: Buffer; readonly sha512: Buffer };

function signedData(namespace: string, hashAlg: string, message: Signed): Buffer {
  const digest = Buffer.isBuffer(message)
    ? createHash(hashAlg).update(message).digest()
    : hashAlg === 'sha512'
      ? message.sha512
      : (message.sha256 ?? Buffer.alloc(0));
  return Buffer.concat([MAGIC, sshString(namespace), sshString(''), sshString(hashAlg), sshString(digest)]);
}

/** The armored SSHSIG signature of `message`, byte for byte as `ssh-keygen -Y sign -n <namespace>` writes it. */
export function signMessage(message: Signed, key: SigningKey, namespace = SIGNATURE_NAMESPACE): string {
  const signature = key.sign(signedData(namespace, 'sha512', message));
  const blob = Buffer.concat([
    MAGIC,
    uint32(1),
    sshString(key.publicBlob),
    sshString(namespace),
    sshString(''),
    sshString('sha512'),
    sshString(Buffer.concat([sshString('ssh-ed25519'), sshString(signature)])),
  ]);
  const lines = blob.toString('base64').match(/.{1,70}/g)!;
  return `${BEGIN}\n${lines.join('\n')}\n${END}\n`;
}

/** What a signature says: valid (by `key`, whose fingerprint is `fingerprint`), or why not. */
export type SignatureCheck =
  | { readonly valid: true; readonly publicBlob: Buffer; readonly fingerprint: string }
  | { readonly valid: false; readonly reason: string; readonly fingerprint: string | null };

/**
 * Checks an armored SSHSIG signature (the bytes of a `.sig` file, at most
 * MAX_SIGNATURE_BYTES) over `message` in `namespace`. Never throws for a bad
 * signature: the reason says which check failed, without echoing the file.
 */
export function checkSignature(sigFile: Buffer, message: Signed, namespace = SIGNATURE_NAMESPACE): SignatureCheck {
  const bad = (reason: string, fp: string | null = null): SignatureCheck => ({ valid: false, reason, fingerprint: fp });
  if (sigFile.length > MAX_SIGNATURE_BYTES)
    return bad(`is larger than ${MAX_SIGNATURE_BYTES / 1024} KiB, far larger than an SSH signature`);
  const text = sigFile.toString('latin1');
  if (!/^[\x09\x0a\x0d\x20-\x7e]*$/.test(text))
    return bad('is binary, not an armored SSH signature (-----BEGIN SSH SIGNATURE-----)');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0) return bad('is not an armored SSH signature (no -----BEGIN SSH SIGNATURE----- line)');
  if (end < begin) return bad('is truncated (no -----END SSH SIGNATURE----- line)');
  const b64 = text.slice(begin + BEGIN.length, end).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0)
    return bad('is damaged or truncated (its body is not whole base64)');
  const blob = Buffer.from(b64, 'base64');
  let parsed;
  try {
    parsed = parseBlob(blob);
  } catch (err) {
    if (err instanceof WireError) return bad('is damaged or truncated (its content ends early)');
    throw err;
  }
  if (typeof parsed === 'string') return bad(parsed);
  const fp = fingerprint(parsed.publicBlob);
  const keyType = blobKeyType(parsed.publicBlob) ?? '(unreadable)';
  if (keyType !== 'ssh-ed25519')
    return bad(`was made with ${describeKeyType(keyType)}; only Ed25519 signatures are accepted`, fp);
  if (parsed.sigType !== 'ssh-ed25519')
    return bad(`holds a signature of type ${parsed.sigType} for an Ed25519 key`, fp);
  if (parsed.namespace !== namespace) {
    return bad(
      `was made for namespace "${parsed.namespace.slice(0, 60)}", not "${namespace}" (ssh-keygen -Y sign -n ${namespace})`,
      fp,
    );
  }
  if (parsed.hashAlg !== 'sha512' && parsed.hashAlg !== 'sha256') {
    return bad(`uses the hash algorithm "${parsed.hashAlg.slice(0, 20)}", which SSHSIG does not define`, fp);
  }
  const pub = new WireReader(parsed.publicBlob);
  pub.text();
  const raw = pub.string();
  if (raw.length !== 32 || parsed.signature.length !== 64)
    return bad('is damaged (its Ed25519 key or signature has the wrong length)', fp);
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk',
  });
  if (!verify(null, signedData(namespace, parsed.hashAlg, message), publicKey, parsed.signature)) {
    return bad(
      'does not match the manifest: the manifest was changed after it was signed, or the signature is of another file',
      fp,
    );
  }
  return { valid: true, publicBlob: parsed.publicBlob, fingerprint: fp };
}

function parseBlob(blob: Buffer) {
  if (blob.length < MAGIC.length || !blob.subarray(0, MAGIC.length).equals(MAGIC))
    return 'is not an SSHSIG signature (no SSHSIG header)';
  const r = new WireReader(blob.subarray(MAGIC.length));
  const version = r.uint32();
  if (version !== 1) return `is an SSHSIG signature of version ${version}, which this tool does not know`;
  const publicBlob = r.string();
  const namespace = r.text();
  r.string(); // reserved
  const hashAlg = r.text();
  const sig = new WireReader(r.string());
  const sigType = sig.text();
  const signature = sig.string();
  if (!r.done) return 'is damaged (bytes follow the signature)';
  return { publicBlob, namespace, hashAlg, sigType, signature };
}
