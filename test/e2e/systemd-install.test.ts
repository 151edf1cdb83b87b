import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI_BIN, REPO_ROOT, reachableTmpDir, reachableTmpRoot } from '../helpers/run-cli.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { startPingReceiver, type PingReceiver } from '../helpers/ping-receiver.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { installGlobal, pack } from '../helpers/install-packed.js';

// docs/systemd/install.sh into a temporary root, then the installed unit's
// ExecStart line as written, run the way systemd would run it: as an
// unprivileged user (nobody), the environment file and the unit's
// Environment= lines applied, the LoadCredential= file handed over in a
// credentials directory (%d), in the state directory; against the HTTPS fake.
const INSTALL = join(REPO_ROOT, 'docs', 'systemd', 'install.sh');
const SETPRIV = '/usr/bin/setpriv';
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
const ROOT_USER = process.getuid?.() === 0;
/** What systemd gives a service as PATH. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CHECK = '/ping/0d9b8f3e-2c1a-4e5f-9a7b-3c2d1e0f9a8b';

function id(flag: '-u' | '-g', user: string): number {
  return Number(spawnSync('id', [flag, user], { encoding: 'utf8' }).stdout.trim());
}

/**
 * The binary the service user runs: the clone's, or, where the clone is out
 * of that user's reach (in a home directory), the packed project installed
 * into the test's directory.
 */
async function binForNobody(work: string): Promise<string> {
  const r = spawnSync(
    SETPRIV,
    ['--reuid=nobody', `--regid=${id('-g', 'nobody')}`, '--clear-groups', '--', process.execPath, CLI_BIN, '--version'],
    { encoding: 'utf8', cwd: '/', env: { PATH: process.env.PATH } },
  );
  if (r.status === 0) return CLI_BIN;
  const { tarball } = await pack(work);
  return installGlobal(join(work, 'prefix'), tarball, work);
}

let bin = CLI_BIN;

function install(root: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', [INSTALL, '--root', root, '--bin', bin, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `[Service]` directives of a unit file, in order, as [key, value]. */
function directives(unit: string): Array<[string, string]> {
  return unit
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/** An EnvironmentFile: KEY=VALUE lines (comments and blanks skipped; the values install.sh writes need no unquoting). */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/**
 * The command line as systemd makes it (systemd.service, "Command lines"):
 * words split at spaces; `${NAME}` as a word is one argument, the variable's
 * value (empty when unset); `$NAME` as a word is the value split at spaces
 * (no argument when unset or empty). Quotes and other forms are not used by
 * the unit, and are refused here rather than guessed.
 */
function commandLine(exec: string, env: Record<string, string>): string[] {
  expect(exec, 'ExecStart uses quotes or a prefix this test does not read').not.toMatch(/["'\\]|^[-@:+!]/);
  return exec.split(/\s+/).flatMap((word) => {
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(word);
    if (braced) return [env[braced[1]!] ?? ''];
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (bare) return (env[bare[1]!] ?? '').split(/\s+/).filter((w) => w !== '');
    expect(word, 'ExecStart has a variable inside a word').not.toContain('$');
    return [word];
  });
}

interface UnitRun {
  code: number | null;
  stdout: string;
  stderr: string;
  stateDir: string;
  metricsFile: string;
}

/** Runs the installed unit's ExecStart under `root` as nobody, as systemd would. */
async function runUnit(root: string): Promise<UnitRun> {
  const unit = readFileSync(join(root, 'etc', 'systemd', 'system', 'svc-snapshot.service'), 'utf8');
  const d = directives(unit);
  const one = (key: string) => {
    const values = d.filter(([k]) => k === key).map(([, v]) => v);
    expect(values, key).toHaveLength(1);
    return values[0]!;
  };
  expect(one('User')).toBe('nobody');
  // Paths the unit names on the system are under the trial root.
  const rebase = (p: string) => (/^\/(etc|var)\//.test(p) ? join(root, p) : p);
  const uid = id('-u', 'nobody');
  const gid = id('-g', 'nobody');

  // LoadCredential=name:path → a directory only the service user can read (systemd: ramfs, 0500, files 0400).
  const credentials = join(dirname(root), `credentials-${Date.now()}`);
  mkdirSync(credentials, { mode: 0o700 });
  for (const [, value] of d.filter(([k]) => k === 'LoadCredential')) {
    const [name, path] = [value.slice(0, value.indexOf(':')), value.slice(value.indexOf(':') + 1)];
    const file = join(credentials, name);
    copyFileSync(rebase(path), file);
    chmodSync(file, 0o400);
    chownSync(file, uid, gid);
  }
  chmodSync(credentials, 0o500);
  chownSync(credentials, uid, gid);

  // StateDirectory= and WorkingDirectory=: made by systemd for the service user, 0700.
  const stateDir = rebase(`/var/lib/${one('StateDirectory')}`);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chownSync(stateDir, uid, gid);
  expect(rebase(one('WorkingDirectory'))).toBe(stateDir);

  // Environment= first, then EnvironmentFile= (which wins), as systemd applies them; %d is the credentials directory.
  const env: Record<string, string> = {
    PATH: SYSTEMD_PATH,
    HOME: '/nonexistent',
    USER: 'nobody',
    LOGNAME: 'nobody',
    CREDENTIALS_DIRECTORY: credentials,
    TMPDIR: reachableTmpRoot(),
  };
  for (const [, value] of d.filter(([k]) => k === 'Environment')) {
    const eq = value.indexOf('=');
    env[value.slice(0, eq)] = value.slice(eq + 1).replaceAll('%d', credentials);
  }
  for (const [k, v] of Object.entries(environmentFile(readFileSync(rebase(one('EnvironmentFile')), 'utf8'))))
    env[k] = rebase(v);
  if (!SYSTEMD_PATH.split(':').includes(dirname(process.execPath)))
    env.PATH = `${dirname(process.execPath)}:${SYSTEMD_PATH}`;

  const argv = commandLine(one('ExecStart'), env).map((a, i) => (i === 0 ? a : rebase(a)));
  const metricsFile = argv[argv.indexOf('--metrics-file') + 1]!;
  // Under faketime, the suite's clock is set up after the switch to nobody: preloaded into setpriv, root's clock
  // (its shared memory) would be out of nobody's reach.
  const clock =
    process.env.FAKETIME !== undefined
      ? ['/usr/bin/env', `FAKETIME=${process.env.FAKETIME}`, `LD_PRELOAD=${process.env.LD_PRELOAD}`]
      : [];
  const child = spawn(SETPRIV, ['--reuid=nobody', `--regid=${gid}`, '--clear-groups', '--', ...clock, ...argv], {
    cwd: stateDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr, stateDir, metricsFile };
}

describe.skipIf(!ROOT_USER || !existsSync(SETPRIV))('docs/systemd/install.sh and the unit it installs', () => {
  let site: FakeSite;
  let receiver: PingReceiver;
  let work: string;
  let tokenSource: string;
  beforeAll(async () => {
    site = await startFakeSite();
    receiver = await startPingReceiver();
    // The service user must reach the trial root, as it reaches / on a real system.
    work = reachableTmpDir('svc-systemd-');
    chmodSync(work, 0o755);
    bin = await binForNobody(work);
    tokenSource = join(work, 'token.txt');
    writeFileSync(tokenSource, `${ALL_TYPES_TOKEN.value}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await receiver.close();
    await site.close();
  });

  it('installs what the unit reads, with the modes it needs, and a second run changes nothing', () => {
    const root = join(work, 'root-modes');
    mkdirSync(root);
    const args = [
      '--base-url',
      site.url,
      '--token-file',
      tokenSource,
      '--ca-file',
      site.caFile,
      '--ping-url',
      `${receiver.url}${CHECK}`,
    ];
    const first = install(root, args);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const snapshot = () =>
      Object.fromEntries(
        [
          'etc/svc-snapshot',
          'etc/svc-snapshot/env',
          'etc/svc-snapshot/token',
          'etc/svc-snapshot/site-ca.pem',
          'etc/systemd/system/svc-snapshot.service',
          'etc/systemd/system/svc-snapshot.timer',
          'var/lib/node_exporter/textfile_collector',
        ].map((p) => {
          const st = statSync(join(root, p));
          return [
            p,
            {
              mode: (st.mode & 0o7777).toString(8),
              uid: st.uid,
              content: st.isFile() ? readFileSync(join(root, p), 'utf8') : null,
            },
          ];
        }),
      );
    const before = snapshot();
    expect(before['etc/svc-snapshot']).toMatchObject({ mode: '755', uid: 0 });
    expect(before['etc/svc-snapshot/env']).toMatchObject({ mode: '600', uid: 0 });
    expect(before['etc/svc-snapshot/token']).toMatchObject({
      mode: '600',
      uid: 0,
      content: `${ALL_TYPES_TOKEN.value}\n`,
    });
    // The CA is read by the service user: readable by all, in a directory all can enter.
    expect(before['etc/svc-snapshot/site-ca.pem']).toMatchObject({
      mode: '644',
      content: readFileSync(site.caFile, 'utf8'),
    });
    expect(environmentFile(before['etc/svc-snapshot/env']!.content!)).toEqual({
      SVC_BASE_URL: site.url,
      SVC_PING_URL: `${receiver.url}${CHECK}`,
      NODE_EXTRA_CA_CERTS: '/etc/svc-snapshot/site-ca.pem',
    });
    // The token is nowhere but in its file.
    expect(
      `${first.stdout}${before['etc/systemd/system/svc-snapshot.service']!.content}${before['etc/svc-snapshot/env']!.content}`,
    ).not.toContain(ALL_TYPES_TOKEN.value);
    const second = install(root, args);
    expect(second.status).toBe(0);
    expect(snapshot()).toEqual(before);
  });

  it('moves a token and PING_URL from an environment file of the earlier steps to where the unit reads them', () => {
    const root = join(work, 'root-upgrade');
    mkdirSync(join(root, 'etc', 'svc-snapshot'), { recursive: true });
    writeFileSync(
      join(root, 'etc', 'svc-snapshot', 'env'),
      `SVC_BASE_URL=${site.url}\nSVC_TOKEN=${ALL_TYPES_TOKEN.value}\nPING_URL=\n`,
      { mode: 0o600 },
    );
    const r = install(root, []);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain(ALL_TYPES_TOKEN.value);
    expect(readFileSync(join(root, 'etc', 'svc-snapshot', 'token'), 'utf8')).toBe(`${ALL_TYPES_TOKEN.value}\n`);
    expect(statSync(join(root, 'etc', 'svc-snapshot', 'token')).mode & 0o777).toBe(0o600);
    expect(environmentFile(readFileSync(join(root, 'etc', 'svc-snapshot', 'env'), 'utf8'))).toEqual({
      SVC_BASE_URL: site.url,
    });
  });

  it.skipIf(!ANALYZE)('installs units that pass systemd-analyze verify without a warning', () => {
    const root = join(work, 'root-verify');
    mkdirSync(root);
    expect(install(root, ['--base-url', site.url, '--token-file', tokenSource]).status).toBe(0);
    const dir = join(root, 'etc', 'systemd', 'system');
    const unit = readFileSync(join(dir, 'svc-snapshot.service'), 'utf8');
    expect(unit).toContain(`ExecStart=${bin} `);
    const res = spawnSync(
      ANALYZE!,
      ['verify', '--man=no', join(dir, 'svc-snapshot.service'), join(dir, 'svc-snapshot.timer')],
      {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, SYSTEMD_LOG_COLOR: '0' },
      },
    );
    expect({ status: res.status, output: `${res.stdout}${res.stderr}`.trim() }).toEqual({ status: 0, output: '' });
  });

  it("runs the unit's ExecStart as written, as nobody: token from the credential, CA and heartbeat from the environment file; then with SVC_PING_URL empty", async () => {
    const root = join(work, 'root-run');
    mkdirSync(root);
    const args = [
      '--user',
      'nobody',
      '--base-url',
      site.url,
      '--token-file',
      tokenSource,
      '--ca-file',
      site.caFile,
      '--ping-url',
      `${receiver.url}${CHECK}`,
    ];
    expect(install(root, args).status).toBe(0);
    receiver.received.length = 0;
    const run = await runUnit(root);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [snap] = readdirSync(run.stateDir);
    expect(snap).toMatch(/^svc-snapshot-\d{4}-\d{2}-\d{2}$/);
    expect(statSync(join(run.stateDir, snap!)).uid).toBe(id('-u', 'nobody'));
    expect(readdirSync(join(run.stateDir, snap!))).toContain('_snapshot-manifest.json');
    expect(readFileSync(run.metricsFile, 'utf8')).toMatch(/^svc_snapshot_exit_code\{[^}]*\} 0$/m);
    expect(receiver.received.map((p) => p.path)).toEqual([`${CHECK}/start`, CHECK]);

    // An optional setting left empty is off, as everywhere else: no heartbeat, no usage error.
    const envFile = join(root, 'etc', 'svc-snapshot', 'env');
    writeFileSync(envFile, readFileSync(envFile, 'utf8').replace(/^SVC_PING_URL=.*$/m, 'SVC_PING_URL='));
    receiver.received.length = 0;
    const quiet = await runUnit(root);
    expect(quiet.stderr).toBe('');
    expect(quiet.code).toBe(0);
    expect(receiver.received).toEqual([]);
  });
});
