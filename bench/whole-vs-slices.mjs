// node bench/whole-vs-slices.mjs <raw collection dir>: builds the collection
// twice in this process, with every array body parsed whole (as before bodies
// were sliced) and a slice at a time, and prints whether every export file
// and the build's summary (validation, drift, nulls) are byte-identical.
// Needs dist/ (npm run build). The whole-body parse fails over ~512 MB.
import { createHash } from 'node:crypto';

const dir = process.argv[2];
const dist = new URL('../dist/', import.meta.url);
const { readCollection } = await import(new URL('collect/replay.js', dist));
const { build } = await import(new URL('exports/build.js', dist));
const { serializeBatches, EXPORT_BATCH } = await import(new URL('exports/serialize.js', dist));
const { KEEP_EVERYTHING } = await import(new URL('exports/memory-policy.js', dist));

async function digests(wholeBody) {
  const collection = await readCollection(dir);
  const exports = {};
  // One slice of any size is the whole body parsed at once.
  const built = build(collection, KEEP_EVERYTHING, [], wholeBody ? { sliceBytes: Infinity } : {});
  let step = built.next();
  for (; !step.done; step = built.next()) {
    const e = step.value;
    const hash = createHash('sha256');
    for (const piece of serializeBatches(e.batches(EXPORT_BATCH))) hash.update(piece);
    exports[e.export] = `${e.count} ${hash.digest('hex')}`;
  }
  return { exports, summary: createHash('sha256').update(JSON.stringify(step.value)).digest('hex') };
}

const whole = await digests(true);
const slices = await digests(false);
const names = Object.keys(whole.exports);
const differing = names.filter((n) => whole.exports[n] !== slices.exports[n]);
process.stdout.write(`${JSON.stringify({ exports: names.length, differing, summaryIdentical: whole.summary === slices.summary, drives: whole.exports.drives })}\n`);
