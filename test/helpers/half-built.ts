import { copyFileSync, cpSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tmpDir } from './run-cli.js';

/** A copy of the built tool whose lib/ lacks one of its files, with this checkout's node_modules. */
export function halfBuilt(missing: string): string {
  const repo = realpathSync(tmpDir('svc-half-built-'));
  for (const d of ['bin', 'lib']) cpSync(join(REPO_ROOT, d), join(repo, d), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'package.json'), join(repo, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(repo, 'node_modules'));
  rmSync(join(repo, 'lib', missing));
  return repo;
}
