import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location (test/helpers/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_BIN = join(REPO_ROOT, 'bin', 'svc-snapshot.js');

export interface RunCliOptions {
  /** Added to the clean environment; an undefined value removes a variable. */
  env?: Record<string, string | undefined>;
  /** Default: the repository root. */
  cwd?: string;
  /** The child is killed (SIGKILL) after this, a guard against a hang; default 240 s (a busy machine is slow, not hung). */
  timeoutMs?: number;
  /** Another copy of the binary's script; default bin/svc-snapshot.js. */
  bin?: string;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * The environment the CLI runs with: PATH, HOME, TZ and TMPDIR of this process and
 * nothing else (no SVC_* variable, no NODE_OPTIONS, no NODE_EXTRA_CA_CERTS
 * leaks in from the developer's shell), plus `extra`; and the clock the suite
 * runs under, when it runs under Debian's faketime (its LD_PRELOAD and
 * FAKETIME): the binary then sees the same day as the test that checks it.
 */
export function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  // TMPDIR: the run's own temporary directory (test/global/tmp-root.ts), so that what a child leaves there is found.
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TZ: process.env.TZ,
    TMPDIR: process.env.TMPDIR,
    ...(process.env.FAKETIME !== undefined
      ? { FAKETIME: process.env.FAKETIME, LD_PRELOAD: process.env.LD_PRELOAD }
      : {}),
    ...extra,
  };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Starts the CLI and returns the child (to signal it) and its result. */
export function startCli(
  args: readonly string[],
  opts: RunCliOptions = {},
): { child: ChildProcess; result: Promise<CliResult> } {
  const child = spawn(process.execPath, [opts.bin ?? CLI_BIN, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: cliEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = new Promise<CliResult>((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 240_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, timedOut });
    });
  });
  return { child, result };
}

/** Runs `node bin/svc-snapshot.js ...args` in a clean environment. */
export function runCli(args: readonly string[], opts: RunCliOptions = {}): Promise<CliResult> {
  return startCli(args, opts).result;
}

const dirs: string[] = [];

/**
 * Removes the directories tmpDir made. Called after each test file by
 * test/helpers/per-file.ts: a hook registered here, when the module is first
 * imported, would run after the first file of a worker only (the files of a
 * worker share this module: vitest.config.ts, isolate false).
 */
export function removeTmpDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary directory, removed after the test file. */
export function tmpDir(prefix = 'svc-snapshot-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * Where to make a directory that another user must reach (the postgres user
 * of a test cluster, nobody running the systemd unit): the run's TMPDIR, or,
 * when that is private (mode 0700), the directory test/global/tmp-root.ts
 * made for them under /tmp.
 */
export function reachableTmpRoot(): string {
  return process.env.SVC_SNAPSHOT_TEST_SHARED_TMP ?? tmpdir();
}

/** A fresh temporary directory under reachableTmpRoot(), mode 0700 (give it away or open it as needed), removed after the test file. */
export function reachableTmpDir(prefix: string): string {
  const dir = mkdtempSync(join(reachableTmpRoot(), prefix));
  dirs.push(dir);
  return dir;
}

/** Resolves once the child has written `text` on stderr: the run is under way, so a signal now interrupts it mid-way. */
export function stderrSeen(child: ChildProcess, text: string): Promise<void> {
  return new Promise<void>((resolve) => {
    let seen = '';
    child.stderr?.on('data', (c: Buffer) => {
      seen += c.toString();
      if (seen.includes(text)) resolve();
    });
  });
}

/** The pid of a process that has exited: no running process has it (until the system reuses it, long after a test). */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}
