import { escapeForTerminal } from './escape.js';
import { redact } from './redact.js';

/** What every byte written to stdout or stderr goes through: secrets redacted, then control characters escaped. */
export function forTerminal(text: string): string {
  return escapeForTerminal(redact(text));
}
