/** A body's bytes, read by range: a Buffer in memory, or a file read back a slice at a time. */
export interface ByteReader {
  readonly size: number;
  /** Bytes [start, min(end, size)). The slices read forward; describing a fault may read anywhere. */
  read(start: number, end: number): Buffer;
}

export function bufferReader(body: Uint8Array): ByteReader {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return { size: b.length, read: (start, end) => b.subarray(start, Math.min(end, b.length)) };
}
