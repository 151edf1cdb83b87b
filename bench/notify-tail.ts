// What --notify adds, timed inside the run: `--replay <raw> --findings` with
// --notify to a webhook, Slack, Teams and Alertmanager receivers on 127.0.0.1,
// from the run's summary to its exit (bench/notify-tail-mark.mjs), beside a
// replay alone. Whole runs move by more than the digest costs on a shared
// machine; this span does not hold the replay's own time. Several builds
// (each a checkout with bin/ and lib/ built) run in turn, round by round.
//
//   node --import tsx bench/notify-tail.ts <raw-dir> <rounds> <build-dir> [<build-dir> ...]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { notifyArgs, startReceivers } from './notify.js';

const [raw, rounds, ...builds] = process.argv.slice(2);
if (!raw || !(Number(rounds) > 0) || builds.length === 0) {
  console.error('usage: node --import tsx bench/notify-tail.ts <raw-dir> <rounds> <build-dir> [<build-dir> ...]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'notify-tail-'));
const out = join(work, 'out');
const markFile = join(work, 'mark.json');
const mark = fileURLToPath(new URL('./notify-tail-mark.mjs', import.meta.url));
const receivers = await startReceivers();
const notify = notifyArgs(receivers.base);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const seen = new Map(
  builds.map((b) => [b, { tailMs: [] as number[], tailCpu: [] as number[], replayMs: [] as number[] }]),
);

async function run(args: string[], env: Record<string, string> = {}): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`svc-snapshot exited ${code}`);
  return performance.now() - t0;
}

try {
  for (let r = 1; r <= Number(rounds); r++) {
    for (const build of builds) {
      const bin = join(build, 'bin', 'svc-snapshot.js');
      const s = seen.get(build)!;
      s.replayMs.push(Math.round(await run([bin, '--replay', raw, '--out-dir', out, '--quiet'])));
      const args = ['--import', mark, bin, '--replay', raw, '--out-dir', out, '--findings', '--quiet'];
      await run([...args, ...notify], { MARK_FILE: markFile });
      const m = JSON.parse(readFileSync(markFile, 'utf8')) as { tailMs: number; tailCpu: number };
      s.tailMs.push(m.tailMs);
      s.tailCpu.push(m.tailCpu);
      console.log(JSON.stringify({ round: r, build, ...m, replayMs: s.replayMs.at(-1) }));
    }
  }
  for (const [build, s] of seen) {
    const added = median(s.tailMs) / median(s.replayMs);
    const medians = { tailMs: median(s.tailMs), tailCpu: median(s.tailCpu), replayMs: median(s.replayMs) };
    console.log(JSON.stringify({ build, ...medians, addedVsReplay: Number(added.toFixed(3)), target: 0.05 }));
  }
} finally {
  await receivers.close();
  rmSync(work, { recursive: true, force: true });
}
