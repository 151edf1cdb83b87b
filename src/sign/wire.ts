/**
 * The SSH wire encoding (RFC 4251 section 5) that OpenSSH keys and SSHSIG
 * signatures are made of: big-endian uint32, and byte strings prefixed by
 * their uint32 length. Only what this tool reads and writes.
 */
import { createHash } from 'node:crypto';

/** A reader over bytes that throws WireError when the bytes run out before what they announce. */
export class WireReader {
  private at = 0;

  constructor(private readonly buf: Buffer) {}

  /** Bytes read so far. */
  get offset(): number {
    return this.at;
  }

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  bytes(n: number): Buffer {
    if (n < 0 || this.at + n > this.buf.length) throw new WireError('ends before the data it announces');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  uint32(): number {
    return this.bytes(4).readUInt32BE(0);
  }

  string(): Buffer {
    return this.bytes(this.uint32());
  }

  /** A string that must be printable ASCII (a key type, a namespace, a hash name). */
  text(): string {
    const b = this.string();
    if (!/^[\x20-\x7e]*$/.test(b.toString('latin1'))) throw new WireError('holds a name that is not text');
    return b.toString('latin1');
  }
}

export class WireError extends Error {}

export function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

export function sshString(data: Buffer | string): Buffer {
  const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.concat([uint32(b.length), b]);
}

/** The public key blob of an Ed25519 key: string "ssh-ed25519", string key (32 bytes). */
export function ed25519Blob(publicKey: Buffer): Buffer {
  return Buffer.concat([sshString('ssh-ed25519'), sshString(publicKey)]);
}

/** The key type named at the start of a public key blob, or undefined when the blob is not one. */
export function blobKeyType(blob: Buffer): string | undefined {
  try {
    return new WireReader(blob).text();
  } catch {
    return undefined;
  }
}

/** `SHA256:<base64 without padding>`, as ssh-keygen -l prints a key's fingerprint. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** A key type as a person knows it, for messages. */
export function describeKeyType(type: string): string {
  if (type === 'ssh-ed25519') return 'an Ed25519 key (ssh-ed25519)';
  if (type === 'ssh-rsa' || type.startsWith('rsa-sha2-')) return `an RSA key (${type})`;
  if (type.startsWith('ecdsa-sha2-')) return `an ECDSA key (${type})`;
  if (type === 'ssh-dss') return 'a DSA key (ssh-dss)';
  if (type.startsWith('sk-')) return `a security-key (FIDO) key (${type})`;
  if (type.includes('-cert-')) return `a certificate (${type})`;
  return `a key of type ${type}`;
}
