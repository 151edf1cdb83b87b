// Preloaded into a benchmarked child (node --import): on exit, writes the
// process's own peak resident set size (bytes) and the CPU time it used
// (user + system, every thread, ms) to $BENCH_MAXRSS_FILE as JSON.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAXRSS_FILE;
if (file) {
  process.on('exit', () => {
    // resourceUsage(): maxRSS in kilobytes, CPU times in microseconds.
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ maxRss: u.maxRSS * 1024, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
  });
}
