// The second half of `npm run build`: bundles what tsc wrote to dist/ into
// lib/, which bin/svc-snapshot.js runs. One file per command instead of some
// 280 modules: the binary starts in about two thirds of the time (a tiny
// replay 0.32 s -> 0.23 s; docs/performance.md). dist/ stays as tsc wrote it
// for the benchmark's helpers; lib/ is rebuilt from it every time.
//
// Kept out of the bundle: undici (required lazily, only by commands that talk
// to a server), nodemailer (only for e-mail) and the two database drivers (native code, imported lazily).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('lib', { recursive: true, force: true });
await build({
  // Flat names: cron/ping.ts and notify/signal.ts find their child processes
  // (./ping-child.js, ./notify-child.js) beside them, and version.ts reads ../package.json.
  entryPoints: {
    main: 'dist/cli/main.js',
    'ping-child': 'dist/cron/ping-child.js',
    'notify-child': 'dist/notify/notify-child.js',
  },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: 'lib',
  external: ['libsql', 'pg', 'undici', 'nodemailer'],
  // commander is CommonJS: its require() calls need a require in an ES module.
  banner: {
    js: "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
