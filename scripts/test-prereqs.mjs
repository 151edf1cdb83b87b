#!/usr/bin/env node
// What the test suite runs besides Node, checked before `npm test` builds or
// runs anything. Whatever is missing is installed when it can be (root, with
// apt-get: one `apt-get update`, then one install); otherwise this stops with
// one line saying what to install, and exit 1. Nothing is started: the tests
// start their own servers (PostgreSQL clusters, node_exporter) and remove them.
// When everything is there it only looks at a few paths.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const onPath = (name) =>
  (process.env.PATH ?? '/usr/bin:/bin').split(':').some((d) => d !== '' && existsSync(join(d, name)));
const anyOf =
  (...paths) =>
  () =>
    paths.some((p) => existsSync(p));
const postgresServer = () => {
  const base = '/usr/lib/postgresql';
  return (
    existsSync(base) &&
    readdirSync(base).some(
      (v) => existsSync(join(base, v, 'bin', 'initdb')) && existsSync(join(base, v, 'bin', 'pg_ctl')),
    )
  );
};

/**
 * One entry per tool: what the tests use it for, how to find it, and the
 * Debian packages that provide it (the first one apt knows is installed).
 */
const NEEDS = [
  {
    what: 'openssl',
    why: "the fake servers' test certificates",
    present: () => onPath('openssl'),
    packages: ['openssl'],
  },
  {
    what: 'LibreOffice (soffice)',
    why: 'opening the workbooks',
    present: anyOf('/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'),
    packages: ['libreoffice-calc-nogui'],
  },
  {
    what: 'PostgreSQL server (initdb, pg_ctl)',
    why: 'the history database tests',
    present: postgresServer,
    packages: ['postgresql-15', 'postgresql'],
  },
  { what: 'ssh-keygen', why: 'checking signatures', present: () => onPath('ssh-keygen'), packages: ['openssh-client'] },
  {
    what: 'age and age-keygen',
    why: 'reading and writing encrypted archives as an admin would',
    present: () => onPath('age') && onPath('age-keygen'),
    packages: ['age'],
  },
  {
    what: 'systemd-analyze',
    why: 'verifying the systemd units',
    present: anyOf('/usr/bin/systemd-analyze', '/bin/systemd-analyze'),
    packages: ['systemd'],
  },
  {
    what: 'setpriv',
    why: "running the systemd unit's command as another user",
    present: () => onPath('setpriv') || existsSync('/usr/bin/setpriv'),
    packages: ['util-linux'],
  },
  {
    what: 'prometheus-node-exporter',
    why: 'reading the metrics files',
    present: anyOf('/usr/bin/prometheus-node-exporter'),
    packages: ['prometheus-node-exporter'],
  },
  {
    what: 'chromium',
    why: 'opening the report page (driven by playwright-core, which downloads no browser)',
    present: anyOf('/usr/bin/chromium'),
    packages: ['chromium'],
  },
  {
    what: 'promtool',
    why: 'checking the metrics files',
    present: () => onPath('promtool') || existsSync('/usr/bin/promtool'),
    packages: ['prometheus'],
  },
  {
    what: 'prometheus-alertmanager',
    why: 'receiving the notifications as alerts',
    present: anyOf('/usr/bin/prometheus-alertmanager'),
    packages: ['prometheus-alertmanager'],
  },
  {
    what: 'aiosmtpd (Debian python3-aiosmtpd)',
    why: 'receiving the notifications as e-mail (run by /usr/bin/python3)',
    present: anyOf('/usr/lib/python3/dist-packages/aiosmtpd'),
    packages: ['python3-aiosmtpd'],
  },
];

function run(cmd, args) {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** The first of `packages` that apt has a candidate for (after the update). */
function available(packages) {
  for (const p of packages) {
    const r = run('apt-cache', ['policy', p]);
    if (r.ok && /Candidate: (?!\(none\))/.test(r.output)) return p;
  }
  return undefined;
}

let missing = NEEDS.filter((n) => !n.present());
if (missing.length === 0) process.exit(0);

const names = () => missing.map((n) => n.what).join(', ');
const stop = (why) => {
  const packages = [...new Set(missing.map((n) => n.packages[0]))].join(' ');
  const verb = missing.length === 1 ? 'is' : 'are';
  console.error(
    `npm test needs ${names()}, which ${verb} not installed${why}: as root, run apt-get update && apt-get install -y --no-install-recommends ${packages}`,
  );
  process.exit(1);
};

const root = process.getuid?.() === 0;
if (!root) stop(' (only root can install them)');
if (!onPath('apt-get')) stop(' (apt-get is not here to install them)');

console.error(`npm test: installing what the tests need (${names()}) with apt-get`);
const lock = ['-o', 'DPkg::Lock::Timeout=600'];
const update = run('apt-get', [...lock, 'update', '-qq']);
if (!update.ok) stop(` (apt-get update failed: ${lastLine(update.output)})`);
const packages = [...new Set(missing.map((n) => available(n.packages) ?? n.packages[0]))];
const install = run('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', ...packages]);
const before = missing;
missing = missing.filter((n) => !n.present());
if (!install.ok || missing.length > 0) {
  if (missing.length === 0) missing = before;
  stop(` (apt-get install ${packages.join(' ')} failed: ${lastLine(install.output)})`);
}
console.error('npm test: installed');

function lastLine(text) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return (lines.filter((l) => /^E:/.test(l)).pop() ?? lines.pop() ?? 'no output').slice(0, 300);
}
