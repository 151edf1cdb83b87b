// node --expose-gc bench/fast-paths-ab.mjs <raw collection> <rounds>
// The in-process half of bench/fast-paths.ts, on the built dist/ files.
import { createHash } from 'node:crypto';
import { readCollection } from '../dist/collect/replay.js';
import { checkBody } from '../dist/body/decode.js';
import { planRoute, planRoutes, REALMS_ROUTE } from '../dist/api/catalog.js';
import { build } from '../dist/exports/build.js';
import { KEEP_EVERYTHING } from '../dist/exports/memory-policy.js';
import { EXPORT_BATCH, serializeBatches } from '../dist/exports/serialize.js';
import { FAST_PATHS } from '../dist/fast-paths.js';

const [raw, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 5);
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const cpuMs = (f) => {
  globalThis.gc?.();
  const c0 = process.cpuUsage();
  const out = f();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, out };
};

const collection = await readCollection(raw, { checkBodies: false });

// The build: every export serialized into one hash, so a variant that changed a byte shows.
function buildOnce(fast) {
  const h = createHash('sha256');
  const gen = build(collection, KEEP_EVERYTHING, [], { fast });
  for (let step = gen.next(); !step.done; step = gen.next()) for (const s of serializeBatches(step.value.batches(EXPORT_BATCH))) h.update(s);
  return h.digest('hex').slice(0, 12);
}
// The switches the build reads.
const buildSwitches = ['recordCheck', 'recordMaker', 'keyOrder'];
const variants = ['all on', ...buildSwitches.map((k) => `${k} off`), 'all off'];
const res = Object.fromEntries(variants.map((v) => [v, { cpu: [], hashes: new Set() }]));
const switchesOf = (v) => {
  const off = v === 'all off' ? buildSwitches : v === 'all on' ? [] : [v.replace(/ off$/, '')];
  return { ...FAST_PATHS, ...Object.fromEntries(off.map((k) => [k, false])) };
};
buildOnce(FAST_PATHS);
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    const fast = switchesOf(v);
    const { ms, out } = cpuMs(() => buildOnce(fast));
    res[v].cpu.push(ms);
    res[v].hashes.add(out);
  }
}

// The body check: the JSON scan against JSON.parse over every body.
const defs = new Map([planRoute(REALMS_ROUTE), ...planRoutes(collection.manifest.realms.ids)].map((p) => [p.label, p.def]));
const checkAll = (fast) => {
  for (const [label, body] of collection.bodies) checkBody(label, defs.get(label), body, { quote: false, fast });
};
const scan = { on: [], off: [] };
for (let r = 0; r < rounds; r++) {
  scan.on.push(cpuMs(() => checkAll(FAST_PATHS)).ms);
  scan.off.push(cpuMs(() => checkAll({ ...FAST_PATHS, jsonScan: false })).ms);
}

const base = median(res['all on'].cpu);
const allHashes = new Set(variants.flatMap((v) => [...res[v].hashes]));
const bytes = [...collection.bodies.values()].reduce((a, b) => a + b.length, 0);
const lines = [
  `Fast paths on ${(bytes / 1e6).toFixed(1)} MB of bodies, medians of ${rounds} rounds (CPU time, in one process)`,
  '',
  '| build with | CPU ms | × all on |',
  '|---|---:|---:|',
  ...variants.map((v) => `| ${v} | ${median(res[v].cpu).toFixed(0)} | ${(median(res[v].cpu) / base).toFixed(2)} |`),
  '',
  `| body check | CPU ms |`,
  '|---|---:|',
  `| JSON scan (jsonScan on) | ${median(scan.on).toFixed(0)} |`,
  `| JSON.parse (jsonScan off) | ${median(scan.off).toFixed(0)} |`,
  '',
  allHashes.size === 1 ? `Every variant wrote the same bytes (sha256 ${[...allHashes][0]}…).` : `VARIANTS DIFFER: ${variants.map((v) => `${v}=${[...res[v].hashes].join('/')}`).join(', ')}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
if (allHashes.size !== 1) process.exitCode = 1;
