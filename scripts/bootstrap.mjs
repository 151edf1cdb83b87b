#!/usr/bin/env node
// The first step of `npm start` and `npm test`, so that either works as the
// first command typed in a fresh clone (README, "The two commands"): the
// locked dependencies are installed with `npm ci` when they are not (npm's
// prepare script then builds lib/), and lib/ is built when `npm start` needs
// it and it is not there; one line says which. When both are there it only
// looks at two paths. It runs before node_modules/ exists, so it uses Node's
// built-ins alone.
//
//   node scripts/bootstrap.mjs start   # dependencies and lib/
//   node scripts/bootstrap.mjs test    # dependencies (npm test builds lib/ itself)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = process.argv[2];
if (target !== 'start' && target !== 'test') {
  console.error('usage: node scripts/bootstrap.mjs start|test');
  process.exit(2);
}

// npm writes its hidden lockfile last, so an install that was interrupted has none.
const installed = () => existsSync(join(root, 'node_modules', '.package-lock.json'));
const built = () => existsSync(join(root, 'lib', 'main.js'));

/** The npm that runs this script (npm sets npm_execpath for scripts), else the one on PATH. */
function npm(args) {
  const execpath = process.env.npm_execpath;
  const [cmd, argv] = execpath ? [process.execPath, [execpath, ...args]] : ['npm', args];
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit' });
  if (r.status === 0) return;
  const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit ${r.status}`;
  console.error(
    `npm ${target}: npm ${args.join(' ')} failed (${why}); fix what it says above and run npm ${target} again`,
  );
  process.exit(1);
}

if (!installed()) {
  console.error(
    `npm ${target}: the dependencies are not installed in this clone: installing the locked versions (npm ci) and building lib/, once`,
  );
  npm(['ci', '--no-audit', '--no-fund']);
}
// npm ci builds lib/ (the prepare script) unless scripts are turned off (ignore-scripts in an .npmrc).
if (target === 'start' && !built()) {
  console.error('npm start: lib/ is not built: building it (npm run build), once');
  npm(['run', 'build']);
}
