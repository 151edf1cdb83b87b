// The diff baseline: read and JSON.parse every JSON file of the given
// snapshot directories (keeping the values, as a diff must), nothing else.
//   node bench/baseline-parse.mjs <dir> <dir> ...
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const kept = [];
for (const dir of process.argv.slice(2)) {
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.json')) kept.push(JSON.parse(readFileSync(join(dir, name), 'utf8')));
  }
}
process.stdout.write(`${kept.length}\n`);
