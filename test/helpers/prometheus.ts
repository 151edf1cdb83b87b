import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './free-port.js';
import { delimiter, join } from 'node:path';

// Debian's prometheus-node-exporter (its textfile collector reads --metrics-file's files) and promtool (package
// prometheus), to check the files the tool writes with the programs that read them.

function onPath(names: readonly string[]): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter).concat('/usr/bin', '/usr/local/bin')) {
    for (const n of names) if (dir !== '' && existsSync(join(dir, n))) return join(dir, n);
  }
  return null;
}

export const NODE_EXPORTER = onPath(['prometheus-node-exporter', 'node_exporter']);
export const PROMTOOL = onPath(['promtool']);

/** Why the node_exporter and promtool tests cannot run here, or null when they can. In CI (CI=true) a missing program fails them instead. */
export function prometheusToolsUnavailable(): string | null {
  const missing = [
    NODE_EXPORTER ? null : 'prometheus-node-exporter',
    PROMTOOL ? null : 'promtool (package prometheus)',
  ].filter((m) => m !== null);
  if (missing.length === 0) return null;
  const why = `${missing.join(' and ')} not installed; apt-get install prometheus-node-exporter prometheus (.ci/run does)`;
  if (process.env.CI) throw new Error(why);
  return why;
}

/** `promtool check metrics` over a file's text: its exit code and what it said. */
export function promtoolCheck(text: string): { code: number | null; output: string } {
  const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

export interface NodeExporter {
  /** GET /metrics: the status and body. */
  scrape(): Promise<{ status: number; body: string }>;
  /** What node_exporter logged so far (its errors gathering metrics among them). */
  log(): string;
  stop(): Promise<void>;
}

/** node_exporter on a free 127.0.0.1 port with only the textfile collector, over `dir`; resolves once it answers. */
export async function startNodeExporter(dir: string): Promise<NodeExporter> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      NODE_EXPORTER!,
      [
        `--web.listen-address=127.0.0.1:${port}`,
        '--collector.disable-defaults',
        '--collector.textfile',
        `--collector.textfile.directory=${dir}`,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let log = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (log += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (log += c));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const scrape = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return { status: res.status, body: await res.text() };
    };
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    };
    // Ready when it answers; a port taken meanwhile makes it exit, and another is tried.
    for (let i = 0; i < 100 && child.exitCode === null; i++) {
      try {
        await scrape();
        return { scrape, log: () => log, stop };
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await stop();
    if (attempt >= 2) throw new Error(`node_exporter did not start: ${log.slice(-1000)}`);
  }
}
