// Makes a second raw collection from a first one, with about `share` of the
// records of every list changed in one non-key field (a name or a
// description gets a suffix; else a timestamp moves by one), and the
// manifest's bytes and sha256 updated, so a replay of it is a snapshot that
// differs from the first in that share of records.
//   node bench/mutate.mjs <collection dir> <out dir> <share>
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [src, dst, shareArg] = process.argv.slice(2);
const every = Math.max(1, Math.round(1 / Number(shareArg)));
const STRING_FIELDS = ['name', 'desc', 'description', 'lastName', 'email', 'server', 'modifiedBy'];
const NUMBER_FIELDS = ['modified', 'changed', 'created', 'added', 'joined'];

function change(rec) {
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return false;
  for (const k of STRING_FIELDS) {
    if (typeof rec[k] === 'string') {
      rec[k] = `${rec[k]} (changed)`;
      return true;
    }
  }
  for (const k of NUMBER_FIELDS) {
    if (typeof rec[k] === 'number') {
      rec[k] += 1;
      return true;
    }
  }
  return false;
}

mkdirSync(dst, { recursive: true });
const manifest = JSON.parse(readFileSync(join(src, '_collection-manifest.json'), 'utf8'));
let changed = 0;
let total = 0;
for (const r of manifest.routes) {
  if (!r.file) continue;
  let bytes = readFileSync(join(src, r.file));
  const value = JSON.parse(bytes.toString('utf8'));
  if (Array.isArray(value)) {
    total += value.length;
    for (let i = 0; i < value.length; i += every) if (change(value[i])) changed++;
    bytes = Buffer.from(JSON.stringify(value), 'utf8');
  }
  writeFileSync(join(dst, r.file), bytes);
  r.bytes = bytes.length;
  r.sha256 = createHash('sha256').update(bytes).digest('hex');
}
writeFileSync(join(dst, '_collection-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
process.stdout.write(`${JSON.stringify({ changed, total })}\n`);
