import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './run-cli.js';

const run = promisify(execFile);

/** This process's environment without what `npm test` adds (npm_config_*, npm_package_*), which would steer the npm below. */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && v !== undefined) env[k] = v;
  return { ...env, ...extra };
}

export async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env: npmEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export interface Packed {
  /** The tarball's path. */
  tarball: string;
  /** The paths the tarball holds, as `npm pack --json` lists them. */
  files: string[];
}

/** `npm pack` of the clone into `dir` (lib/ must be built: no prepare script is run). */
export async function pack(dir: string): Promise<Packed> {
  const packed = JSON.parse(
    await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO_ROOT),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(dir, packed[0]!.filename), files: packed[0]!.files.map((f) => f.path) };
}

/**
 * `npm install -g --prefix <prefix>` of a tarball or a directory; the
 * dependencies come from npm's cache where it has them (after `npm ci` the
 * tarballs are there; only the registry's metadata may be asked for, once).
 * Returns the installed command's path.
 */
export async function installGlobal(prefix: string, what: string, cwd: string, extra: string[] = []): Promise<string> {
  await npm(['install', '-g', '--prefix', prefix, '--prefer-offline', ...extra, what], cwd);
  return join(prefix, 'bin', 'svc-snapshot');
}
