/**
 * OpenSSH's own ssh-keygen, to make keys and to cross-check signatures
 * (CONTRACT section 13). Keys go into a temporary directory that the caller
 * removes (`removeKeys`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function hasSshKeygen(): boolean {
  // In CI (.ci/run installs openssh-client) a missing ssh-keygen fails the tests rather than skipping them.
  return process.env.CI === 'true' || spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error === undefined;
}

export function keyDir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-keys-'));
}

export function removeKeys(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** `ssh-keygen -t <type> -N <passphrase> -f <dir>/<name>`; returns the private key's path (the public one is `.pub`). */
export function makeKey(
  dir: string,
  name: string,
  type = 'ed25519',
  opts: { passphrase?: string; pem?: boolean } = {},
): string {
  const file = join(dir, name);
  const args = ['-q', '-t', type, '-N', opts.passphrase ?? '', '-C', `${name}@test`, '-f', file];
  if (opts.pem) args.push('-m', 'PEM');
  execFileSync('ssh-keygen', args, { stdio: 'ignore' });
  chmodSync(file, 0o600);
  return file;
}

/** An allowed_signers line for the key: `<principal> [options] <type> <base64>`. */
export function allowedLine(keyFile: string, principal: string, options = ''): string {
  const pub = readFileSync(`${keyFile}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  return `${principal}${options ? ` ${options}` : ''} ${pub}`;
}

/** `ssh-keygen -Y sign -n <namespace> -f key file`: writes `<file>.sig`. */
export function sshSign(keyFile: string, file: string, namespace = 'svc-snapshot'): void {
  execFileSync('ssh-keygen', ['-Y', 'sign', '-n', namespace, '-f', keyFile, file], { stdio: 'ignore' });
}

/** `ssh-keygen -Y verify … < message`: its exit code and output. */
export function sshVerify(
  allowedSigners: string,
  identity: string,
  sigFile: string,
  messageFile: string,
  namespace = 'svc-snapshot',
): { code: number | null; output: string } {
  const res = spawnSync(
    'ssh-keygen',
    ['-Y', 'verify', '-n', namespace, '-f', allowedSigners, '-I', identity, '-s', sigFile],
    { input: readFileSync(messageFile), encoding: 'utf8' },
  );
  return { code: res.status, output: `${res.stdout}${res.stderr}` };
}
