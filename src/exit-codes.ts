/**
 * Exit codes live here and nowhere else (README.md, "Exit codes"). Commands return
 * one for a run that finished; an error thrown from below becomes one only in
 * the top-level catch of `main` (exitCodeOf), since the errors themselves
 * (src/errors.ts) know nothing of processes.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  tokenRejected: 3,
  incomplete: 4,
  changed: 5,
  /** --fail-on: a finding of that severity or higher (the snapshot published either way). */
  findings: 6,
  sigint: 130,
  sigterm: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
