// Preload of bench/notify-tail.ts: the CPU and wall time of the process from
// its first write to stdout (the run's summary, after publishing) to its exit,
// written to MARK_FILE as JSON.
import { writeFileSync } from 'node:fs';

let at;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (...args) => {
  at ??= { cpu: process.cpuUsage(), t: performance.now() };
  return write(...args);
};
process.on('exit', () => {
  if (!process.env.MARK_FILE || !at) return;
  const c = process.cpuUsage(at.cpu);
  const tailCpu = Math.round((c.user + c.system) / 1000);
  writeFileSync(process.env.MARK_FILE, JSON.stringify({ tailMs: Math.round(performance.now() - at.t), tailCpu }));
});
