import { generateDataset, siteRealms } from './test/fake/dataset.js';
const d = generateDataset({ sizes: { drives: 200000 }, realms: siteRealms(10), release: '3.14.1' });
let buf = Buffer.from(JSON.stringify(d.drives));
(d as any).drives = null;
const mode = process.argv[2];
(globalThis as any).gc(); const h0 = process.memoryUsage().heapUsed;
const out: unknown[] = [];
if (mode === 'whole') { for (const v of JSON.parse(buf.toString())) out.push(v); }
else {
  // cut roughly every 4MB at '},{'
  let a = 1; const end = buf.length - 1;
  while (a < end) { let b = Math.min(end, a + 4_000_000); if (b < end) { b = buf.indexOf('},{', b) + 1; } const s = '[' + buf.toString('utf8', a, b) + ']'; for (const v of JSON.parse(s)) out.push(v); a = b + 1; }
}
(globalThis as any).gc(); const h1 = process.memoryUsage().heapUsed;
console.log(mode, 'body/drive', buf.length / 200000, 'heap/drive', (h1 - h0) / 200000, out.length, 'rss', process.memoryUsage().rss/1e6);
