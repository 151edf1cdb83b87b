/**
 * What `verify` can say of a file and of a signature (docs/verify.md):
 * one list each, read by the checks and by the --json schema
 * (src/summaries/schemas.ts), so the two cannot drift apart.
 */
export const FILE_STATES = [
  'ok',
  'unhashed',
  'not covered',
  'missing',
  'size mismatch',
  'sha256 mismatch',
  'symbolic link',
  'not a regular file',
  'unsafe name',
  'conflicting entries',
  'unreadable',
  'unexpected',
] as const;
export type FileState = (typeof FILE_STATES)[number];

/** States that are reported but do not fail the directory. */
export const WARNING_STATES: ReadonlySet<FileState> = new Set(['ok', 'unhashed', 'not covered']);

export { SIGNATURE_STATES } from '../sign/states.js';
