// The replay baseline: read every raw file of a collection, JSON.parse it,
// and write JSON.stringify of it back (into another directory). Nothing else.
//   node bench/baseline-replay.mjs <collection dir> <out dir>
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
for (const name of readdirSync(dir)) {
  if (!name.endsWith('.json')) continue;
  const value = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  writeFileSync(join(out, name), JSON.stringify(value));
}
