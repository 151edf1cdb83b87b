/** `--fail-on <severity>`, parsed without loading the rules (option records are read before any command runs). */
import { UsageError } from '../errors.js';
import { SEVERITIES, type Severity } from './define.js';

export function parseSeverity(raw: string, from: string): Severity {
  const s = raw.trim().toLowerCase();
  if ((SEVERITIES as readonly string[]).includes(s)) return s as Severity;
  throw new UsageError(`${from} must be one of ${SEVERITIES.join(', ')}; got "${raw.slice(0, 40).replace(/[^\x20-\x7e]/g, '?')}"`);
}
