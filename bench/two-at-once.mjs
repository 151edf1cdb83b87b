// A fixed piece of CPU-bound work, timed inside the process (start-up left
// out): JSON.parse and JSON.stringify of one file, twice. The bench runs it
// alone and then two at once, to measure how much two threads of work get
// from the machine's two cores (1 = two whole cores, 2 = one).
//   node bench/two-at-once.mjs <file>    prints {"ms": …}
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8');
const t0 = performance.now();
let length = 0;
for (let i = 0; i < 2; i++) length += JSON.stringify(JSON.parse(text)).length;
process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, length })}\n`);
