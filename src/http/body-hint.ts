import { escapeControl } from '../util/escape.js';
import { redactedStart } from '../util/redact.js';

/**
 * The start of an error response's body, for a message: what the server said
 * in its own words, redacted, whitespace folded, control characters escaped,
 * at most 160 characters; compressed bytes are named, never printed.
 */
export function bodyHint(body: Buffer, speaker = 'the server'): string {
  if (body[0] === 0x1f && body[1] === 0x8b) return '; the body is gzip-compressed data';
  const text = escapeControl(redactedStart(body, 160).replace(/\s+/g, ' ').trim());
  return text ? `; ${speaker} said: ${text.slice(0, 160)}` : '';
}
