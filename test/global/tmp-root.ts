import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The test run's own temporary directory (vitest globalSetup, main process).
 * Set as TMPDIR before the workers start, so os.tmpdir() in every test file
 * and in every child the helpers start (test/helpers/run-cli.ts passes TMPDIR
 * on) points into it. At the end of the run it must be empty: whatever a test
 * left there is listed and fails the run, once, then the directory is removed
 * so that a failed run does not fill the disk either.
 */
export default function setup(): () => void {
  // Each project of vitest.config.ts runs its global setup; the first makes the directory and checks it.
  if (process.env.SVC_SNAPSHOT_TEST_TMP !== undefined) return () => {};
  const root = mkdtempSync(join(tmpdir(), 'svc-snapshot-run-'));
  // Like /tmp: the history tests' PostgreSQL clusters belong to the postgres
  // user, and the systemd test runs the binary as nobody.
  chmodSync(root, 0o1777);
  const previous = process.env.TMPDIR;
  // The test certificates (test/fake/certs.ts), which each worker makes once and keeps to its end.
  const certs = mkdtempSync(join(tmpdir(), 'svc-snapshot-run-certs-'));
  process.env.TMPDIR = root;
  process.env.SVC_SNAPSHOT_TEST_TMP = root;
  process.env.SVC_SNAPSHOT_TEST_CERTS = certs;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    delete process.env.SVC_SNAPSHOT_TEST_TMP;
    delete process.env.SVC_SNAPSHOT_TEST_CERTS;
    rmSync(certs, { recursive: true, force: true });
    const left = leftovers(root);
    rmSync(root, { recursive: true, force: true });
    if (left.length > 0) {
      // vitest reports an error thrown here but keeps its exit code: set it too.
      process.exitCode = 1;
      throw new Error(
        `the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in their temporary directory (removed now; each test must remove what it makes):\n` +
          left.map((l) => `  ${l}`).join('\n'),
      );
    }
  };
}

/** Top-level entries, each with its size, largest first. */
function leftovers(root: string): string[] {
  const entries = readdirSync(root).map((name) => ({ name, bytes: sizeOf(join(root, name)) }));
  entries.sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  return entries.map((e) => `${e.name} (${(e.bytes / 1024 / 1024).toFixed(1)} MB)`);
}

function sizeOf(path: string): number {
  try {
    const st = lstatSync(path);
    if (!st.isDirectory()) return st.size;
    return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
  } catch {
    return 0;
  }
}
