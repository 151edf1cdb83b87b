/**
 * The notification row alone: what `--notify` adds to a nightly snapshot with
 * findings on the large site, the digest sent to local receivers (a JSON
 * webhook, Slack, Teams and Alertmanager on 127.0.0.1, which read each body
 * whole and answer 200). The large site collected once, then `--replay
 * --findings` and the same with `--notify` alternately; the target is at most
 * 0.05× the replay. Judged on the children's CPU time as well as wall time:
 * on a machine shared with other jobs the wall time of two runs of the same
 * work varied by a third, the CPU time by a few per cent.
 *
 *   npm run build && node --import tsx bench/notify-once.ts [runs] [factor] [--no-alertmanager]
 *
 * --no-alertmanager leaves Alertmanager out: the digest alone, without an alert per finding.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { run, stat, withCollectedSite } from './harness.js';
import { notifyArgs, startReceivers } from './notify.js';

const runs = Number(process.argv[2] ?? 3);
const factor = Number(process.argv[3] ?? 1);
const TARGET = 0.05;
const withAlertmanager = !process.argv.includes('--no-alertmanager');

await withCollectedSite('notify', factor, async ({ raw, workDir, bin: BIN, log }) => {
  const receivers = await startReceivers();
  const notify = notifyArgs(receivers.base, withAlertmanager);
  const plain: number[] = [];
  const notified: number[] = [];
  const plainCpu: number[] = [];
  const notifiedCpu: number[] = [];
  try {
    for (let r = 0; r < runs; r++) {
      const a = join(workDir, `svc-snapshot-a-${r}`);
      const pa = await run([BIN, '--replay', raw, '--out-dir', a, '--findings', '--quiet'], { workDir, rss: true });
      plain.push(pa.ms);
      plainCpu.push(pa.cpuMs!);
      rmSync(a, { recursive: true, force: true });
      const b = join(workDir, `svc-snapshot-b-${r}`);
      const args = [BIN, '--replay', raw, '--out-dir', b, '--findings', '--quiet', ...notify];
      const nb = await run(args, { workDir, rss: true });
      notified.push(nb.ms);
      notifiedCpu.push(nb.cpuMs!);
      rmSync(b, { recursive: true, force: true });
      log(
        `round ${r + 1}: --findings ${plain[r]!.toFixed(0)} ms (CPU ${plainCpu[r]!.toFixed(0)}), ` +
          `with --notify ${notified[r]!.toFixed(0)} ms (CPU ${notifiedCpu[r]!.toFixed(0)})`,
      );
    }
  } finally {
    await receivers.close();
  }
  const p = stat(plain)!.median;
  const n = stat(notified)!.median;
  const active = (JSON.parse(receivers.seen.lastHook) as { findings: { active: number } }).findings.active;
  const ratio = (n - p) / p;
  const pc = stat(plainCpu)!.median;
  const nc = stat(notifiedCpu)!.median;
  const cpuRatio = (nc - pc) / pc;
  process.stdout.write(
    `${JSON.stringify({
      factor,
      runs,
      alertmanager: withAlertmanager,
      findings: active,
      replayFindingsMs: p,
      withNotifyMs: n,
      addedRatio: ratio,
      replayFindingsCpuMs: pc,
      withNotifyCpuMs: nc,
      addedCpuRatio: cpuRatio,
      target: TARGET,
      met: cpuRatio <= TARGET,
      requests: receivers.seen.requests,
      bytesSent: receivers.seen.bytes,
    })}\n`,
  );
});
