// Makes the next night of a snapshot directory: about `share` of the records
// of every export changed in one non-key text column (a suffix), the files
// and the manifest's sha256 and counts rewritten, `time` and `date` moved to
// the given values, so that `history load` sees a later snapshot with that
// share of changes. File names are kept (they carry the first night's date).
//   node bench/history-night.mjs <snapshot dir> <out dir> <share> <time> <date>
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG } from '../dist/exports/catalog.js';

const [src, dst, shareArg, time, date] = process.argv.slice(2);
// A share of 0: no record changed (the files come out byte for byte as they were).
const every = Number(shareArg) > 0 ? Math.max(1, Math.round(1 / Number(shareArg))) : Infinity;
mkdirSync(dst, { recursive: true });
const manifest = JSON.parse(readFileSync(join(src, '_snapshot-manifest.json'), 'utf8'));
let changed = 0;
let total = 0;
for (const e of manifest.exports) {
  const def = CATALOG.find((d) => d.name === e.export);
  const text = readFileSync(join(src, e.file), 'utf8');
  const records = JSON.parse(text);
  total += records.length;
  for (let i = 0; every !== Infinity && i < records.length; i += every) {
    const r = records[i];
    const column = Object.keys(r).find((c) => !def.key.includes(c) && typeof r[c] === 'string');
    if (column === undefined) continue;
    r[column] = `${r[column]} (changed)`;
    changed++;
  }
  const out = records.length === 0 ? '[]\n' : `${JSON.stringify(records, null, 2)}\n`;
  writeFileSync(join(dst, e.file), out);
  e.sha256 = createHash('sha256').update(out).digest('hex');
}
manifest.time = time;
manifest.date = date;
writeFileSync(join(dst, '_snapshot-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
process.stdout.write(JSON.stringify({ changed, total }));
