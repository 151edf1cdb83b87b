import { escapeControl } from '../util/escape.js';

/**
 * The start of an error response's body, for a message: what the server said
 * in its own words, whitespace folded, control characters escaped, at most
 * 160 characters; compressed bytes are named, never printed.
 */
export function bodyHint(body: Buffer, speaker = 'the server'): string {
  if (body[0] === 0x1f && body[1] === 0x8b) return '; the body is gzip-compressed data';
  const text = escapeControl(body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ').trim());
  return text ? `; ${speaker} said: ${text.slice(0, 160)}` : '';
}
