/**
 * Memory to hand to a worker thread with postMessage's transfer list: the
 * buffer's own ArrayBuffer when the bytes fill it (moved, not copied; the
 * caller must not use the bytes afterwards), else a copy of just the bytes
 * (a Buffer from Node's pool shares its ArrayBuffer with others).
 */
export function movable(bytes: Uint8Array): ArrayBuffer {
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return own ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
}
