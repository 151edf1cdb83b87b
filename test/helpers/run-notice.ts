/** A snapshot run's notice (src/notify/digest.ts) for the digest and payload tests: a fixed site, night and directory. */
import type { RunNotice } from '../../src/notify/digest.js';
import type { FindingIn } from '../../src/findings/file.js';

export function runNotice(findings: FindingIn[], extra: Partial<RunNotice> = {}): RunNotice {
  return {
    command: 'snapshot',
    site: 'https://platform.example.org',
    time: '2026-11-22T02:00:00.000Z',
    exitCode: 0,
    outDir: '/var/lib/svc/svc-snapshot-2026-11-22',
    exports: [{ export: 'users', count: 12, available: true }],
    findings: { time: '2026-11-22T02:00:00.000Z', rules: [], findings },
    ...extra,
  };
}
