/**
 * FAST PATH: an age file's payload encrypted and decrypted with Node's own
 * ChaCha20-Poly1305 (OpenSSL) instead of age-encryption's JavaScript one.
 * Equivalent to `Encrypter.encrypt` and `Decrypter.decrypt` of a whole
 * file: age-encryption still makes and reads the header (the file key
 * wrapped to each recipient and unwrapped, the header's MAC); this file
 * only does the STREAM framing of the age v1 spec over the payload (a
 * 16-byte nonce, the key HKDF-SHA-256(file key, nonce, "payload"), 64 KiB
 * chunks each with its tag, the chunk counter in the first 11 bytes of the
 * nonce and the last chunk flagged in the 12th), failing as the library
 * does: "invalid tag" for a chunk that does not authenticate, "final chunk
 * is empty" for an empty last chunk after others. About twenty times the
 * library's speed (docs/performance.md).
 * The plain path (age-encryption's own cipher) is kept for the differential test:
 * test/unit/archive-stream.test.ts.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Encrypter } from 'age-encryption';

const CHUNK = 64 * 1024;
const TAG = 16;
const NONCE = 16;

/** The bytes of a chunk as a Buffer, not copied (Buffer.from of a Uint8Array copies it). */
function view(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

function openChunk(key: Buffer, counter: bigint, last: boolean, sealed: Uint8Array): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(counter, 3);
  nonce[11] = last ? 1 : 0;
  const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  const plain = decipher.update(sealed.subarray(0, sealed.length - TAG));
  try {
    decipher.final();
  } catch {
    throw new Error('invalid tag');
  }
  return plain;
}

/**
 * The plaintext of the payload that follows the header, a chunk at a time,
 * given the file key the header holds and the payload's bytes in pieces
 * (each may be read into again once the next is asked for).
 */
export function* decryptPayload(fileKey: Uint8Array, payload: Iterable<Buffer>): Generator<Buffer> {
  const FULL = CHUNK + TAG;
  let key: Buffer | undefined;
  /** The bytes of a chunk begun in an earlier piece (a copy). */
  let pending: Buffer = Buffer.alloc(0);
  let counter = 0n;
  for (let piece of payload) {
    if (key === undefined) {
      pending = Buffer.concat([pending, piece]);
      if (pending.length < NONCE) continue;
      key = Buffer.from(hkdfSync('sha256', fileKey, pending.subarray(0, NONCE), 'payload', 32));
      piece = pending.subarray(NONCE);
      pending = Buffer.alloc(0);
    }
    // A full chunk is the last only when nothing follows it: keep it until more comes, or the end.
    let at = 0;
    if (pending.length > 0) {
      at = Math.min(FULL - pending.length, piece.length);
      pending = Buffer.concat([pending, piece.subarray(0, at)]);
      if (at === piece.length) continue;
      yield openChunk(key, counter++, false, pending);
    }
    for (; piece.length - at > FULL; at += FULL) yield openChunk(key, counter++, false, piece.subarray(at, at + FULL));
    pending = Buffer.from(piece.subarray(at));
  }
  if (key === undefined || pending.length < TAG) throw new Error('ciphertext is too small');
  const last = openChunk(key, counter, true, pending);
  if (counter > 0n && last.length === 0) throw new Error('final chunk is empty');
  yield last;
}

function sealChunk(key: Buffer, counter: bigint, last: boolean, plain: Uint8Array): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(counter, 3);
  nonce[11] = last ? 1 : 0;
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  const sealed = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return sealed;
}

/**
 * The age file of `plain` to `recipients`, as a stream: the header as
 * age-encryption makes it (for a file key it chose, caught by a recipient
 * that adds no stanza), then the payload sealed here.
 */
export async function encryptWithHeader(
  recipients: readonly string[],
  plain: ReadableStream<Uint8Array>,
): Promise<ReadableStream<Uint8Array>> {
  const encrypter = new Encrypter();
  for (const r of recipients) encrypter.addRecipient(r);
  let fileKey: Uint8Array | undefined;
  encrypter.addRecipient({
    wrapFileKey(key: Uint8Array) {
      fileKey = key;
      return [];
    },
  });
  const whole = Buffer.from(await encrypter.encrypt(new Uint8Array(0)));
  const mac = whole.indexOf('\n--- ');
  const header = whole.subarray(0, whole.indexOf('\n', mac + 1) + 1);
  const nonce = randomBytes(NONCE);
  const key = Buffer.from(hkdfSync('sha256', fileKey!, nonce, 'payload', 32));
  let pending: Buffer = Buffer.alloc(0);
  let counter = 0n;
  let started = false;
  return plain.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!started) {
          controller.enqueue(Buffer.concat([header, nonce]));
          started = true;
        }
        pending = pending.length === 0 ? view(chunk) : Buffer.concat([pending, chunk]);
        // A full chunk is the last only when nothing follows it: keep it until more comes, or the end.
        let at = 0;
        while (pending.length - at > CHUNK) {
          controller.enqueue(sealChunk(key, counter++, false, pending.subarray(at, at + CHUNK)));
          at += CHUNK;
        }
        pending = pending.subarray(at);
      },
      flush(controller) {
        if (!started) controller.enqueue(Buffer.concat([header, nonce]));
        controller.enqueue(sealChunk(key, counter, true, pending));
      },
    }),
  );
}
