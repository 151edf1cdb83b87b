/**
 * Debian's age and age-keygen, to make keys and to read and write archives
 * the way an admin would, outside the tool. Keys go into a temporary
 * directory that the caller removes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function hasAge(): boolean {
  // In CI (scripts/test-prereqs.mjs installs age) a missing age fails the tests rather than skipping them.
  return process.env.CI === 'true' || spawnSync('age', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** A new identity file made by age-keygen, and its recipient (`age1…`). */
export function makeIdentity(dir = mkdtempSync(join(tmpdir(), 'svc-age-')), name = 'key.txt') {
  const file = join(dir, name);
  execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
  chmodSync(file, 0o600);
  const recipient = execFileSync('age-keygen', ['-y', file], { encoding: 'utf8' }).trim();
  return { dir, file, recipient };
}

/** `age -d -i identity archive`: the plaintext tar. */
export function ageDecrypt(identity: string, archive: string): Buffer {
  return execFileSync('age', ['-d', '-i', identity, archive], { maxBuffer: 1 << 30 });
}

/** `tar -x -C dir` of the tar on standard input. */
export function untar(tarBytes: Buffer, dir: string): void {
  execFileSync('tar', ['-x', '-C', dir], { input: tarBytes });
}
