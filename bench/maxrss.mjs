// Preloaded into a benchmarked child (node --import): on exit, writes the
// process's own peak resident set size (bytes) to $BENCH_MAXRSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAXRSS_FILE;
if (file) {
  process.on('exit', () => {
    // resourceUsage().maxRSS is in kilobytes.
    writeFileSync(file, String(process.resourceUsage().maxRSS * 1024));
  });
}
