/**
 * The notification row of `npm run bench` (issue 46): what `--notify` adds to
 * a nightly `--replay --findings` on the large site, the digest sent to local
 * receivers on 127.0.0.1 (a JSON webhook, Slack, Teams and Alertmanager, each
 * reading every body whole and answering 200), as a share of a replay (target
 * TARGETS.notifyVsReplay). bench/notify-once.ts runs it alone.
 */
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Row, Stat } from './harness.js';
import { TARGETS } from './workload.js';

export function notifySupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'notify', 'index.js'));
}

/** Receives every POST whole and answers 200; counts the requests and bytes, and keeps the webhook's last body. */
export async function startReceivers() {
  const seen = { requests: 0, bytes: 0, lastHook: '' };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.requests++;
      seen.bytes += body.length;
      if (req.url === '/hook') seen.lastHook = body.toString('utf8');
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The --notify arguments of a run to the receivers at `base`; every run sends (--notify-on always). */
export function notifyArgs(base: string, withAlertmanager = true): string[] {
  const targets = [`${base}/hook`, `slack+${base}/slack`, `teams+${base}/teams`];
  const all = withAlertmanager ? [...targets, `alertmanager+${base}`] : targets;
  return [...all.flatMap((t) => ['--notify', t]), '--notify-on', 'always'];
}

export function notifyRow(
  notified: number[],
  findings: number[],
  replay: Stat | undefined,
  stat: (xs: number[]) => Stat | undefined,
): Row {
  const n = stat(notified);
  const f = stat(findings);
  return {
    figure: '--replay --findings --notify to local receivers (time added over --replay --findings)',
    unit: 'ms',
    stat: n,
    ...(n && f && replay ? { ratio: (n.median - f.median) / replay.median } : {}),
    ratioOf: 'added ÷ --replay',
    target: { op: '≤', value: TARGETS.notifyVsReplay },
  };
}
