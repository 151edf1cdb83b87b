#!/usr/bin/env node
import { fileURLToPath } from 'node:url';

let main;
try {
  ({ main } = await import('../lib/main.js'));
} catch (err) {
  // A clone where `npm install` (which builds lib/) has not run yet.
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('/lib/main.js')) throw err;
  const repo = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`svc-snapshot: ${repo}lib/ is not built; run npm install (or npm run build) in ${repo}\n`);
  process.exit(1);
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
