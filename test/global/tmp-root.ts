import {
  accessSync,
  chmodSync,
  constants,
  lstatSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The test run's own temporary directory (vitest globalSetup, main process).
 * Set as TMPDIR before the workers start, so os.tmpdir() in every test file
 * and in every child the helpers start (test/helpers/run-cli.ts passes TMPDIR
 * on) points into it. At the end of the run it must be empty: whatever a test
 * left there is listed and fails the run, once, then the directory is removed
 * so that a failed run does not fill the disk either.
 *
 * The tests that drop privileges (PostgreSQL clusters run by the postgres
 * user, the systemd unit run as nobody) need a directory those users can
 * reach. A TMPDIR of mode 0700 (pam_tmpdir, systemd's PrivateTmp) is out of
 * their reach, so then a second directory is made for them under /tmp (or
 * /var/tmp), named in SVC_SNAPSHOT_TEST_SHARED_TMP, checked and removed the
 * same way; otherwise it is the run's own directory.
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
  const shared = sharedRoot(root);
  process.env.TMPDIR = root;
  process.env.SVC_SNAPSHOT_TEST_TMP = root;
  process.env.SVC_SNAPSHOT_TEST_SHARED_TMP = shared;
  process.env.SVC_SNAPSHOT_TEST_CERTS = certs;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    delete process.env.SVC_SNAPSHOT_TEST_TMP;
    delete process.env.SVC_SNAPSHOT_TEST_SHARED_TMP;
    delete process.env.SVC_SNAPSHOT_TEST_CERTS;
    rmSync(certs, { recursive: true, force: true });
    const left = leftovers(root);
    rmSync(root, { recursive: true, force: true });
    if (shared !== root) {
      left.push(...leftovers(shared).map((l) => `${shared}/${l}`));
      rmSync(shared, { recursive: true, force: true });
    }
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

/** `root` when every user can reach it; otherwise a directory of mode 1777 under /tmp or /var/tmp, whichever they can reach. */
function sharedRoot(root: string): string {
  if (othersCanReach(root)) return root;
  const base = ['/tmp', '/var/tmp'].find((d) => othersCanReach(d) && writable(d));
  if (base === undefined) return root;
  const shared = mkdtempSync(join(base, 'svc-snapshot-run-shared-'));
  chmodSync(shared, 0o1777);
  return shared;
}

/** Whether a user other than the owner may pass through every directory on the way to `dir` (o+x on each). */
function othersCanReach(dir: string): boolean {
  let d: string;
  try {
    d = realpathSync(dir);
  } catch {
    return false;
  }
  for (;;) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (dirname(d) === d) return true;
    d = dirname(d);
  }
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
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
