/**
 * The benchmark harness: starts the fake backend in its own process, runs
 * the real CLI (bin/svc-snapshot.js, so dist/ must be built) as child
 * processes against it, and measures every figure against its baseline from
 * the same run. `runBench` returns the results; `renderResults` makes
 * RESULTS.md of them.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, cpus, release as osRelease, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { readOptions } from '../src/config/options.js';
import { benchHistory } from './history.js';
import {
  benchReportHistory,
  nightBefore,
  pageSizeRow,
  reportPage,
  reportSupported,
  type ReportContext,
} from './report.js';
import { benchVerify } from './verify.js';
import { archiveSupported, benchArchive } from './archive.js';
import { overTimeContext, overTimeRound, overTimeRows, overTimeSupported } from './findings-over-time.js';
import { notifyArgs, notifyRow, notifySupported, startReceivers } from './notify.js';
import {
  DIFF_CHANGED_SHARE,
  LATENCY_MS,
  MIN_RUNS,
  RELEASE,
  REPORT_HISTORY_NIGHTS,
  TARGETS,
  VARIETY,
  site,
  type Site,
} from './workload.js';

/** The client's defaults, from its option records. */
const DEFAULTS = { concurrency: readOptions('collect', {}, {}).concurrency };

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_BIN = join(REPO_ROOT, 'bin', 'svc-snapshot.js');
export const BENCH = join(REPO_ROOT, 'bench');

export interface BenchOptions {
  /** Runs per figure (medians); default MIN_RUNS. */
  runs?: number;
  /** Scale of the site against the large site: 1 for the benchmark, smaller to iterate. */
  factor?: number;
  /** Realms of the site; default 10. */
  realmCount?: number;
  /** Also measure peak memory on a site twice as large (default true). */
  doubled?: boolean;
  /** Added to every response; default 50 ms. */
  latencyMs?: number;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
  /** The CLI to measure; default this repository's bin/svc-snapshot.js (e.g. another build, to compare a change). */
  bin?: string;
  /** Nights loaded into the history database after the first; default HISTORY_NIGHTS. */
  historyNights?: number;
  /** Nights in the history database of the report's figure with a history; default REPORT_HISTORY_NIGHTS. */
  reportHistoryNights?: number;
}

/** What a section of the bench measuring the large site's collection (verify, history) is given by runBench. */
export interface SectionContext {
  bin: string;
  workDir: string;
  runs: number;
  /** The collection every figure's replay reads. */
  raw: string;
  run: (args: readonly string[], opts: { workDir: string }) => Promise<{ ms: number; stdout: string }>;
  stat: (samples: readonly number[]) => Stat | undefined;
  log: (line: string) => void;
}

export interface Stat {
  readonly samples: number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface Row {
  readonly figure: string;
  readonly unit: 'ms' | 'MB';
  readonly stat: Stat | undefined;
  /** The ratio the target is about, from medians; undefined for a baseline row. */
  readonly ratio?: number;
  /** How the ratio is formed, e.g. "÷ critical path". */
  readonly ratioOf?: string;
  readonly target?: { readonly op: '≤' | '≥'; readonly value: number };
}

export interface BenchResults {
  readonly machine: { cpu: string; cores: number; memoryGB: number; node: string; os: string };
  readonly date: string;
  readonly runs: number;
  readonly sites: ReadonlyArray<{ name: string; site: Site; collectionBytes: number }>;
  readonly rows: Row[];
  /** Each round's comparison of the live snapshot's export files with the replay's: how many files, and whether every sha256 matched. */
  readonly hashChecks: ReadonlyArray<{ readonly round: number; readonly files: number; readonly identical: boolean }>;
  readonly notes: string[];
  readonly wallSeconds: number;
  /** The CLI measured, when not this repository's. */
  readonly bin?: string;
}

// ---------------------------------------------------------------- processes

export interface ChildResult {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
  maxRss?: number;
  /** CPU time of the child, user + system, every thread (with `rss`). */
  cpuMs?: number;
}

/**
 * The CLI's environment: nothing leaks in from the caller's shell (no NODE_OPTIONS), but the clock the bench
 * runs under when faketime runs it (its LD_PRELOAD and FAKETIME), so that the CLI sees the bench's day.
 */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  const clock = process.env.FAKETIME !== undefined ? ['FAKETIME', 'LD_PRELOAD'] : [];
  for (const k of ['PATH', 'HOME', 'TZ', 'LANG', ...clock]) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, ...extra };
}

let rssCounter = 0;

/** Runs `node <args>`, timing spawn to exit; with `rss`, the child reports its own peak RSS and CPU time through bench/maxrss.mjs. */
export async function run(
  args: readonly string[],
  opts: { env?: Record<string, string>; rss?: boolean; ok?: readonly number[]; workDir: string },
): Promise<ChildResult> {
  const rssFile = opts.rss ? join(opts.workDir, `maxrss-${process.pid}-${rssCounter++}`) : undefined;
  const nodeArgs = rssFile ? ['--import', join(BENCH, 'maxrss.mjs'), ...args] : [...args];
  const env = cleanEnv({ ...opts.env, ...(rssFile ? { BENCH_MAXRSS_FILE: rssFile } : {}) });
  const t0 = performance.now();
  const child = spawn(process.execPath, nodeArgs, { cwd: opts.workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((res, rej) => {
    child.once('error', rej);
    child.once('exit', (c) => res(c));
  });
  const ms = performance.now() - t0;
  // 'exit' can come before the pipes are drained.
  await new Promise((r) => setImmediate(r));
  const ok = opts.ok ?? [0];
  if (code === null || !ok.includes(code)) {
    throw new Error(`node ${args.join(' ')} exited with ${code}: ${stderr.slice(-2000)}`);
  }
  if (rssFile) {
    const usage = JSON.parse(readFileSync(rssFile, 'utf8')) as { maxRss: number; cpuMs: number };
    rmSync(rssFile, { force: true });
    return { ms, code, stdout, stderr, maxRss: usage.maxRss, cpuMs: usage.cpuMs };
  }
  return { ms, code, stdout, stderr };
}

export interface Server {
  url: string;
  caFile: string;
  token: string;
  /** CPU time the server process has used so far (user + system, every thread), in ms; undefined where /proc cannot tell. */
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat's times. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process from /proc (Linux), in ms. */
function procCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3: utime and stime are fields 14 and 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

export async function startServer(s: Site, latencyMs: number, log: (l: string) => void): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'test', 'fake', 'serve.ts'),
      '--sizes-json',
      JSON.stringify(s.sizes),
      '--realms-json',
      JSON.stringify(s.realms),
      '--latency',
      String(latencyMs),
      '--release',
      RELEASE,
      ...(VARIETY ? ['--variety'] : []),
    ],
    { cwd: REPO_ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  const line = await new Promise<string>((res, rej) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (l) => {
      rl.close();
      res(l);
    });
    void exited.then((c) =>
      rej(new Error(`the bench server exited (${c}) before it was ready: ${stderr.slice(-2000)}`)),
    );
  });
  const info = JSON.parse(line) as { url: string; caFile: string; token: string };
  log(`server for the ${s.name} site at ${info.url}`);
  return {
    ...info,
    cpuMs: () => procCpuMs(child.pid),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------- helpers

export function stat(samples: readonly number[]): Stat | undefined {
  if (samples.length === 0) return undefined;
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { samples: [...samples], median, min: s[0]!, max: s[s.length - 1]! };
}

export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

/** sha256 of every export file (not the manifest, which holds times), by name. */
export function exportHashes(dir: string, endings: readonly string[] = ['.json']): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    if (name.startsWith('_') || !endings.some((e) => name.endsWith(e))) continue;
    out.set(
      name,
      createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex'),
    );
  }
  return out;
}

/** The largest body file of a raw collection. */
function largestBody(raw: string): string {
  let best = '';
  let size = -1;
  for (const name of readdirSync(raw)) {
    if (name.startsWith('_') || !name.endsWith('.json')) continue;
    const bytes = statSync(join(raw, name)).size;
    if (bytes > size) [best, size] = [join(raw, name), bytes];
  }
  return best;
}

export function sameHashes(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** Whether this build writes spreadsheets (`--format`, src/sheets/). */
function formatsSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'sheets', 'write.js'));
}

/** Whether this build registers `svc-snapshot diff` (src/commands/diff.ts wired into src/cli/main.ts). */
function diffRegistered(bin: string): boolean {
  const root = dirname(dirname(bin));
  const main = join(root, 'dist', 'cli', 'main.js');
  return (
    existsSync(join(root, 'dist', 'commands', 'diff.js')) &&
    existsSync(main) &&
    /\bname: 'diff'/.test(readFileSync(main, 'utf8'))
  );
}

/** Whether this build has `--include` (src/includes.ts). */
function includeSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'includes.js'));
}

/** Whether this build has `--findings` (src/findings). */
function findingsSupported(bin: string): boolean {
  return existsSync(join(dirname(dirname(bin)), 'dist', 'findings', 'index.js'));
}

// ---------------------------------------------------------------- the run

/** What a bench/*-once.ts script measures with: the large site's raw collection, a directory for its outputs, the binary and a log. */
export interface CollectedSite {
  readonly raw: string;
  readonly workDir: string;
  readonly bin: string;
  readonly log: (line: string) => void;
}

/**
 * For the bench/*-once.ts scripts, which measure one row alone: the large
 * site at `factor` served and collected once (the server stopped before
 * anything is timed), `measure` run over the collection, everything removed
 * after.
 */
export async function withCollectedSite<T>(
  name: string,
  factor: number,
  measure: (site: CollectedSite) => Promise<T>,
): Promise<T> {
  const bin = join(REPO_ROOT, 'bin', 'svc-snapshot.js');
  const workDir = mkdtempSync(join(tmpdir(), `svc-bench-${name}-`));
  const log = (l: string) => process.stderr.write(`bench: ${l}\n`);
  const server = await startServer(site('large', factor), 0, log);
  try {
    const raw = join(workDir, 'raw');
    await run([bin, 'collect', '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', raw, '--quiet'], {
      env: { SVC_TOKEN: server.token },
      workDir,
    });
    await server.stop();
    return await measure({ raw, workDir, bin, log });
  } finally {
    await server.stop().catch(() => {});
    rmSync(workDir, { recursive: true, force: true });
  }
}

export async function runBench(opts: BenchOptions = {}): Promise<BenchResults> {
  const started = performance.now();
  const runs = opts.runs ?? MIN_RUNS;
  const factor = opts.factor ?? 1;
  const latencyMs = opts.latencyMs ?? LATENCY_MS;
  const log = opts.log ?? (() => {});
  const BIN = opts.bin ? resolve(opts.bin) : DEFAULT_BIN;
  if (!existsSync(join(REPO_ROOT, 'lib', 'main.js')))
    throw new Error('lib/ is not built: run npm run build first (npm run bench does)');
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist`);
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const notes: string[] = [];
  const rows: Row[] = [];
  const hashChecks: Array<{ round: number; files: number; identical: boolean }> = [];
  const sites: Array<{ name: string; site: Site; collectionBytes: number }> = [];
  const servers: Server[] = [];
  /** The notification row's local receivers (bench/notify.ts). */
  let receivers: Awaited<ReturnType<typeof startReceivers>> | undefined;
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  try {
    const one = site(factor === 1 ? 'large (1×)' : `${factor}× large`, factor, opts.realmCount);
    const server = await startServer(one, latencyMs, log);
    servers.push(server);
    const live = (out: string, extra: string[] = [], rss = false) =>
      run([BIN, ...extra, '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', out, '--quiet'], {
        env: { SVC_TOKEN: server.token },
        rss,
        workDir,
      });

    // Warm-up (not counted): the server's first answers, the disk cache, and the raw collection replay reads.
    const raw = join(workDir, 'raw-1x');
    await run([BIN, 'collect', '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', raw, '--quiet'], {
      env: { SVC_TOKEN: server.token },
      workDir,
    });
    const collectionBytes = dirBytes(raw);
    sites.push({ name: one.name, site: one, collectionBytes });
    await live(join(workDir, 'warm'));
    rmSync(join(workDir, 'warm'), { recursive: true, force: true });
    log(`[${elapsed()}] warmed up; raw collection ${(collectionBytes / 1e6).toFixed(1)} MB`);

    // The second collection of the same site, DIFF_CHANGED_SHARE of its records changed: the newer snapshot of the
    // diff, and the night before of the report's pages (bench/report.ts).
    const mutated = join(workDir, 'raw-1x-changed');
    let mutation: { changed: number; total: number } | undefined;
    if (diffRegistered(BIN) || reportSupported(BIN)) {
      mutation = JSON.parse(
        (await run([join(BENCH, 'mutate.mjs'), raw, mutated, String(DIFF_CHANGED_SHARE)], { workDir })).stdout,
      ) as { changed: number; total: number };
    }
    const overTime = overTimeSupported(BIN)
      ? await overTimeContext(BIN, mutated, raw, join(workDir, 'over-time-nights'), workDir, run)
      : undefined;
    receivers = findingsSupported(BIN) && notifySupported(BIN) ? await startReceivers() : undefined;
    const report: ReportContext | undefined = reportSupported(BIN)
      ? await nightBefore(BIN, mutated, raw, join(workDir, 'report-nights'), workDir, run)
      : undefined;

    const samples = {
      critical: [] as number[],
      floor: [] as number[],
      floorSequential: [] as number[],
      collect: [] as number[],
      live: [] as number[],
      liveRss: [] as number[],
      sequential: [] as number[],
      replay: [] as number[],
      replayRss: [] as number[],
      sheets: [] as number[],
      sheetsRss: [] as number[],
      findings: [] as number[],
      notify: [] as number[],
      overTime: { findings: [] as number[], lifecycle: [] as number[], json: [] as number[], csv: [] as number[] },
      includeVms: [] as number[],
      report: [] as number[],
      reportBytes: [] as number[],
      baseline: [] as number[],
      help: [] as number[],
      node: [] as number[],
      // The same CPU-bound work alone and two at once: what parallel work can get from the cores.
      cpuAlone: [] as number[],
      cpuPair: [] as number[],
      // CPU time of the client and the server together (ms).
      floorCpu: [] as number[],
      collectCpu: [] as number[],
      liveCpu: [] as number[],
    };
    /**
     * A child run, and the CPU time of client and server over it into `into`:
     * the child's own (`clientCpuMs` of its result) plus the server's over the
     * same span (none where /proc cannot tell).
     */
    const withServerCpu = async (
      into: number[],
      go: () => Promise<ChildResult>,
      clientCpuMs = (res: ChildResult) => res.cpuMs,
    ): Promise<ChildResult> => {
      const before = server.cpuMs();
      const res = await go();
      const after = server.cpuMs();
      const client = clientCpuMs(res);
      if (before !== undefined && after !== undefined && client !== undefined) into.push(client + after - before);
      return res;
    };
    let slowestRoute = '';
    let identical = true;
    for (let r = 0; r < runs; r++) {
      const cp = await run([join(BENCH, 'critical-path.mjs'), server.url, server.caFile, server.token], { workDir });
      const path = JSON.parse(cp.stdout) as {
        realmsMs: number;
        slowest: { route: string; ms: number; bytes: number };
        totalMs: number;
      };
      samples.critical.push(path.totalMs);
      slowestRoute = `${path.slowest.route} (${(path.slowest.bytes / 1e6).toFixed(1)} MB)`;

      const floor = (n: number) =>
        run([join(BENCH, 'transport-floor.mjs'), server.url, server.caFile, server.token, String(n)], { workDir });
      // The floor's own CPU time is over its measured span (its stdout); the server is idle while the process starts.
      const floorOut = (res: ChildResult) => JSON.parse(res.stdout) as { ms: number; cpuMs: number };
      const f6 = floorOut(
        await withServerCpu(
          samples.floorCpu,
          () => floor(DEFAULTS.concurrency),
          (res) => floorOut(res).cpuMs,
        ),
      );
      samples.floor.push(f6.ms);
      samples.floorSequential.push((JSON.parse((await floor(1)).stdout) as { ms: number }).ms);

      const c = join(workDir, `collect-${r}`);
      const cr = await withServerCpu(samples.collectCpu, () =>
        run([BIN, 'collect', '--base-url', server.url, '--ca-file', server.caFile, '--out-dir', c, '--quiet'], {
          env: { SVC_TOKEN: server.token },
          rss: true,
          workDir,
        }),
      );
      samples.collect.push(cr.ms);
      rmSync(c, { recursive: true, force: true });

      const s = join(workDir, `live-${r}`);
      const l = await withServerCpu(samples.liveCpu, () => live(s, [], true));
      samples.live.push(l.ms);
      samples.liveRss.push(l.maxRss!);

      const q = join(workDir, `seq-${r}`);
      samples.sequential.push((await live(q, ['--concurrency', '1'])).ms);
      rmSync(q, { recursive: true, force: true });

      const p = join(workDir, `replay-${r}`);
      const rp = await run([BIN, '--replay', raw, '--out-dir', p, '--quiet'], { rss: true, workDir });
      samples.replay.push(rp.ms);
      samples.replayRss.push(rp.maxRss!);
      const sheetsDir = join(workDir, `sheets-${r}`);
      if (formatsSupported(BIN)) {
        const fr = await run([BIN, '--replay', raw, '--out-dir', sheetsDir, '--format', 'csv,xlsx', '--quiet'], {
          rss: true,
          workDir,
        });
        samples.sheets.push(fr.ms);
        samples.sheetsRss.push(fr.maxRss!);
      }
      rmSync(sheetsDir, { recursive: true, force: true });
      if (findingsSupported(BIN)) {
        const findingsDir = join(workDir, `findings-${r}`);
        samples.findings.push(
          (await run([BIN, '--replay', raw, '--out-dir', findingsDir, '--findings', '--quiet'], { workDir })).ms,
        );
        rmSync(findingsDir, { recursive: true, force: true });
        if (receivers) {
          const args = [BIN, '--replay', raw, '--out-dir', findingsDir, '--findings', '--quiet'];
          samples.notify.push((await run([...args, ...notifyArgs(receivers.base)], { workDir })).ms);
          rmSync(findingsDir, { recursive: true, force: true });
        }
      }
      if (overTime) {
        const o = await overTimeRound(overTime, `round-${r}`);
        samples.overTime.findings.push(o.findingsMs);
        samples.overTime.lifecycle.push(o.lifecycleMs);
        samples.overTime.json.push(o.jsonMs);
        samples.overTime.csv.push(o.csvMs);
      }
      if (includeSupported(BIN)) {
        const vmsDir = join(workDir, `include-vms-${r}`);
        samples.includeVms.push(
          (await run([BIN, '--replay', raw, '--out-dir', vmsDir, '--include', 'vms', '--quiet'], { workDir })).ms,
        );
        rmSync(vmsDir, { recursive: true, force: true });
      }
      if (report) {
        const page = await reportPage(report, `round-${r}`);
        samples.report.push(page.ms);
        samples.reportBytes.push(page.pageBytes);
      }
      // Live and replay of the same site must write the same bytes.
      const liveHashes = exportHashes(s);
      const same = sameHashes(liveHashes, exportHashes(p));
      hashChecks.push({ round: r + 1, files: liveHashes.size, identical: same });
      // No files compared is no evidence: an empty directory must not pass.
      if (!same || liveHashes.size === 0) identical = false;
      rmSync(s, { recursive: true, force: true });
      rmSync(p, { recursive: true, force: true });

      const b = join(workDir, `baseline-${r}`);
      samples.baseline.push((await run([join(BENCH, 'baseline-replay.mjs'), raw, b], { workDir })).ms);
      rmSync(b, { recursive: true, force: true });

      const largest = largestBody(raw);
      const cpuWork = async () =>
        (JSON.parse((await run([join(BENCH, 'two-at-once.mjs'), largest], { workDir })).stdout) as { ms: number }).ms;
      samples.cpuAlone.push(await cpuWork());
      const pair = await Promise.all([cpuWork(), cpuWork()]);
      samples.cpuPair.push((pair[0]! + pair[1]!) / 2);

      // Start-up is short and noisy: three of each per round.
      for (let i = 0; i < 3; i++) {
        samples.node.push((await run(['-e', '0'], { workDir })).ms);
        samples.help.push((await run([BIN, '--help'], { workDir })).ms);
      }
      log(
        `[${elapsed()}] round ${r + 1}/${runs}: live ${l.ms.toFixed(0)} ms, critical path ${path.totalMs.toFixed(0)} ms, replay ${rp.ms.toFixed(0)} ms`,
      );
    }
    notes.push(`Slowest route fetched alone: ${slowestRoute}.`);
    notes.push(
      identical
        ? 'Live and replay exports were byte-identical in every round.'
        : '**Live and replay exports differed in some round.**',
    );
    const critical = stat(samples.critical);
    const liveStat = stat(samples.live);
    const ratio = (a: Stat | undefined, b: Stat | undefined) => (a && b ? a.median / b.median : undefined);
    const mb = (xs: number[]) => xs.map((x) => x / 1e6);
    const coll1 = collectionBytes / 1e6;
    rows.push({ figure: 'Critical path: GET /api/realms + slowest route alone', unit: 'ms', stat: critical });
    // What no client reading every body over this transport can beat (bench/transport-floor.mjs).
    const floor = stat(samples.floor);
    const floorSeq = stat(samples.floorSequential);
    const floorRatio = ratio(floor, critical);
    const floorSpeedup = ratio(floorSeq, floor);
    rows.push({
      figure: `Transport floor: every route received and dropped, ${DEFAULTS.concurrency} in flight`,
      unit: 'ms',
      stat: floor,
      ratio: floorRatio,
      ratioOf: '÷ critical path',
    });
    rows.push({
      figure: 'Transport floor, one request at a time',
      unit: 'ms',
      stat: floorSeq,
      ratio: floorSpeedup,
      ratioOf: 'sequential ÷ default',
    });
    // The live runs are judged against the floor: what is left above it is the client's own work.
    const collectStat = stat(samples.collect);
    rows.push({
      figure: 'Live collect',
      unit: 'ms',
      stat: collectStat,
      ratio: ratio(collectStat, floor),
      ratioOf: '÷ transport floor',
      target: { op: '≤', value: TARGETS.collectVsFloor },
    });
    rows.push({
      figure: 'Live snapshot',
      unit: 'ms',
      stat: liveStat,
      ratio: ratio(liveStat, floor),
      ratioOf: '÷ transport floor',
      target: { op: '≤', value: TARGETS.liveVsFloor },
    });
    // How busy the machine is: the floor alone keeps the cores nearly full (client and server share them), so
    // the least wall time a live run can take is its CPU time (client and server) spread over every core.
    const cores = availableParallelism();
    const floorCpu = stat(samples.floorCpu);
    if (floorCpu) {
      const collectCpu = stat(samples.collectCpu);
      const liveCpu = stat(samples.liveCpu);
      const least = (cpu: Stat | undefined) => (cpu && floor ? cpu.median / cores / floor.median : undefined);
      rows.push({
        figure: 'CPU time of client and server, transport floor',
        unit: 'ms',
        stat: floorCpu,
        ratio: floor && floorCpu.median / (cores * floor.median),
        ratioOf: `÷ (${cores} cores × its wall time): the share of the machine it keeps busy`,
      });
      rows.push({
        figure: 'CPU time of client and server, live collect',
        unit: 'ms',
        stat: collectCpu,
        ratio: least(collectCpu),
        ratioOf: `÷ ${cores} cores ÷ transport floor: the least this work could take`,
      });
      rows.push({
        figure: 'CPU time of client and server, live snapshot',
        unit: 'ms',
        stat: liveCpu,
        ratio: least(liveCpu),
        ratioOf: `÷ ${cores} cores ÷ transport floor: the least this work could take`,
      });
    } else notes.push("The server's CPU time could not be read (/proc): the CPU rows were not measured.");
    const seq = stat(samples.sequential);
    rows.push({
      figure: 'Live snapshot, --concurrency 1',
      unit: 'ms',
      stat: seq,
      ratio: ratio(seq, liveStat),
      ratioOf: 'sequential ÷ default',
    });
    const base = stat(samples.baseline);
    rows.push({
      figure: 'Baseline: read + JSON.parse + JSON.stringify + write every raw file',
      unit: 'ms',
      stat: base,
    });
    const alone = stat(samples.cpuAlone);
    const pair = stat(samples.cpuPair);
    rows.push({
      figure: 'CPU-bound work alone: JSON.parse + JSON.stringify of the largest raw body, twice',
      unit: 'ms',
      stat: alone,
    });
    rows.push({
      figure: 'The same work, two processes at once (each)',
      unit: 'ms',
      stat: pair,
      ratio: ratio(pair, alone),
      ratioOf: '÷ alone: 1 = two whole cores, 2 = one',
    });
    const rep = stat(samples.replay);
    rows.push({
      figure: '--replay of the collection',
      unit: 'ms',
      stat: rep,
      ratio: ratio(rep, base),
      ratioOf: '÷ baseline',
      target: { op: '≤', value: TARGETS.replayVsBaseline },
    });
    /** A figure measured as a --replay with something more, in the same rounds: the time it adds ÷ the replay's. */
    const addedRow = (figure: string, samplesOf: number[], target: number): Row => {
      const st = stat(samplesOf);
      return {
        figure,
        unit: 'ms',
        stat: st,
        ratio: st && rep ? (st.median - rep.median) / rep.median : undefined,
        ratioOf: 'added ÷ --replay',
        target: { op: '≤', value: target },
      };
    };
    if (samples.sheets.length > 0) {
      // What the spreadsheets add, against what the JSON exports cost: both are replays of the same collection.
      rows.push(
        addedRow('--replay --format csv,xlsx (time added over --replay)', samples.sheets, TARGETS.spreadsheetsVsJson),
      );
    } else notes.push('This build has no --format: the spreadsheet figures were not measured.');
    if (samples.findings.length > 0) {
      // What the rules add (reading back the exports they need and evaluating), against the replay that built them.
      rows.push(addedRow('--replay --findings (time added over --replay)', samples.findings, TARGETS.findingsVsReplay));
    } else notes.push('This build has no --findings: the findings figure was not measured.');
    if (samples.notify.length > 0) rows.push(notifyRow(samples.notify, samples.findings, rep, stat));
    else notes.push('This build has no --notify: what the notifications add was not measured.');
    if (samples.overTime.lifecycle.length > 0) {
      // The states against the night before and 1,000 waivers, and the findings' CSV (bench/findings-over-time.ts).
      rows.push(...overTimeRows(samples.overTime, rep, stat));
    } else notes.push('This build has no --waivers: the findings-over-time figures were not measured.');
    if (samples.includeVms.length > 0) {
      // What the VM inventory adds (every VM config and running VM of every realm, the realms) to the replay of the same collection.
      rows.push(
        addedRow('--replay --include vms (time added over --replay)', samples.includeVms, TARGETS.includeVmsVsReplay),
      );
    } else notes.push('This build has no --include: the VM inventory figure was not measured.');
    if (samples.report.length > 0) {
      // What the page adds (the findings, the comparison with the night before, the page) to the replay of the same collection.
      rows.push(
        addedRow(
          '--replay --format html beside the night before (time added over --replay)',
          samples.report,
          TARGETS.reportVsReplay,
        ),
      );
      rows.push(pageSizeRow('Report page size, beside the night before', samples.reportBytes, stat));
      if (mutation)
        notes.push(
          `report: the night before is a replay of the same site with ${mutation.changed} of ${mutation.total} raw records changed (bench/mutate.mjs), its manifest's time a day earlier; every page is written beside it.`,
        );
    } else notes.push('This build has no --format html: the report figures were not measured.');
    rows.push({ figure: `Raw collection on disk (${one.name})`, unit: 'MB', stat: stat([coll1]) });
    const liveRss1 = stat(mb(samples.liveRss));
    const repRss1 = stat(mb(samples.replayRss));
    rows.push({
      figure: `Peak RSS, live snapshot (${one.name})`,
      unit: 'MB',
      stat: liveRss1,
      ratio: liveRss1 && liveRss1.median / coll1,
      ratioOf: '÷ collection',
      target: { op: '≤', value: TARGETS.rssVsCollection },
    });
    rows.push({
      figure: `Peak RSS, replay (${one.name})`,
      unit: 'MB',
      stat: repRss1,
      ratio: repRss1 && repRss1.median / coll1,
      ratioOf: '÷ collection',
      target: { op: '≤', value: TARGETS.rssVsCollection },
    });
    if (samples.sheetsRss.length > 0) {
      const shRss = stat(mb(samples.sheetsRss));
      rows.push({
        figure: `Peak RSS, replay --format csv,xlsx (${one.name})`,
        unit: 'MB',
        stat: shRss,
        ratio: shRss && shRss.median / coll1,
        ratioOf: '÷ collection',
        target: { op: '≤', value: TARGETS.rssVsCollection },
      });
    }
    const nodeStat = stat(samples.node);
    const helpStat = stat(samples.help);
    rows.push({ figure: 'node -e 0', unit: 'ms', stat: nodeStat });
    rows.push({
      figure: 'svc-snapshot --help',
      unit: 'ms',
      stat: helpStat,
      ratio: ratio(helpStat, nodeStat),
      ratioOf: '÷ node -e 0',
      target: { op: '≤', value: TARGETS.helpVsNode },
    });

    // ---- diff
    if (diffRegistered(BIN)) {
      const { changed, total } = mutation!;
      const older = join(workDir, 'snap-a');
      const newer = join(workDir, 'snap-b');
      await run([BIN, '--replay', raw, '--out-dir', older, '--quiet'], { workDir });
      await run([BIN, '--replay', mutated, '--out-dir', newer, '--quiet'], { workDir });
      const diff: number[] = [];
      const parse: number[] = [];
      let code: number | null = null;
      for (let r = 0; r < runs; r++) {
        const d = await run([BIN, 'diff', older, newer, '--quiet'], { ok: [0, 5], workDir });
        code = d.code;
        diff.push(d.ms);
        parse.push((await run([join(BENCH, 'baseline-parse.mjs'), older, newer], { workDir })).ms);
      }
      notes.push(
        `diff: ${changed} of ${total} raw records changed (${((changed / total) * 100).toFixed(2)}%); svc-snapshot diff exited ${code}.`,
      );
      const ds = stat(diff);
      const ps = stat(parse);
      rows.push({ figure: 'Baseline: JSON.parse of both snapshots’ files', unit: 'ms', stat: ps });
      rows.push({
        figure: 'svc-snapshot diff of the two snapshots',
        unit: 'ms',
        stat: ds,
        ratio: ratio(ds, ps),
        ratioOf: '÷ baseline',
        target: { op: '≤', value: TARGETS.diffVsParse },
      });
      log(`[${elapsed()}] diff measured`);
    } else {
      notes.push('svc-snapshot diff is not registered in this build: its figure was not measured.');
    }

    // ---- verify against sha256sum over the same files
    const verified = await benchVerify({ bin: BIN, workDir, runs, raw, run: (args, o) => run(args, o), stat, log });
    rows.push(...verified.rows);
    notes.push(...verified.notes);

    // ---- archives (--encrypt-to), verify of an archive, the restore drill
    if (archiveSupported(BIN)) {
      const archived = await benchArchive({
        bin: BIN,
        workDir,
        runs,
        raw,
        run: (args, o) => run(args, o),
        runRss: (args, o) => run(args, { ...o, rss: true }),
        stat,
        log,
      });
      rows.push(...archived.rows);
      notes.push(...archived.notes);
      log(`[${elapsed()}] archives measured`);
    } else notes.push('This build has no --encrypt-to: archives and the restore drill were not measured.');

    // ---- history database (SQLite): needs no server, only the collection
    const reportNights = opts.reportHistoryNights ?? REPORT_HISTORY_NIGHTS;
    const history = await benchHistory({
      bin: BIN,
      benchDir: BENCH,
      workDir,
      runs,
      raw,
      run: (args, o) => run(args, o),
      stat,
      log,
      includeVms: includeSupported(BIN),
      ...(opts.historyNights !== undefined ? { nightCount: opts.historyNights } : {}),
      ...(report ? { reportNights } : {}),
    });
    rows.push(...history.rows);
    notes.push(...history.notes);
    log(`[${elapsed()}] history measured`);
    // ---- the report with a history database of that many nights (its first night the replay the pages are made of)
    if (report && history.reportDb) {
      rows.push(...(await benchReportHistory({ ...report, db: history.reportDb, nights: reportNights, runs, stat })));
      log(`[${elapsed()}] report with a history measured`);
    }
    await server.stop();
    servers.pop();

    // ---- twice the site: peak memory must not grow faster than the collection
    if (opts.doubled ?? true) {
      const two = site(factor === 1 ? 'large (2×)' : `${factor * 2}× large`, factor * 2, opts.realmCount);
      const server2 = await startServer(two, latencyMs, log);
      servers.push(server2);
      const raw2 = join(workDir, 'raw-2x');
      await run(
        [BIN, 'collect', '--base-url', server2.url, '--ca-file', server2.caFile, '--out-dir', raw2, '--quiet'],
        { env: { SVC_TOKEN: server2.token }, workDir },
      );
      const bytes2 = dirBytes(raw2);
      sites.push({ name: two.name, site: two, collectionBytes: bytes2 });
      const liveRss: number[] = [];
      const repRss: number[] = [];
      const liveMs: number[] = [];
      for (let r = 0; r < runs; r++) {
        const s = join(workDir, `live2-${r}`);
        const l = await run([BIN, '--base-url', server2.url, '--ca-file', server2.caFile, '--out-dir', s, '--quiet'], {
          env: { SVC_TOKEN: server2.token },
          rss: true,
          workDir,
        });
        liveRss.push(l.maxRss!);
        liveMs.push(l.ms);
        rmSync(s, { recursive: true, force: true });
        const p = join(workDir, `replay2-${r}`);
        repRss.push((await run([BIN, '--replay', raw2, '--out-dir', p, '--quiet'], { rss: true, workDir })).maxRss!);
        rmSync(p, { recursive: true, force: true });
      }
      await server2.stop();
      servers.pop();
      const coll2 = bytes2 / 1e6;
      const l2 = stat(mb(liveRss));
      const r2 = stat(mb(repRss));
      rows.push({ figure: `Raw collection on disk (${two.name})`, unit: 'MB', stat: stat([coll2]) });
      rows.push({ figure: `Live snapshot (${two.name})`, unit: 'ms', stat: stat(liveMs) });
      rows.push({
        figure: `Peak RSS, live snapshot (${two.name})`,
        unit: 'MB',
        stat: l2,
        ratio: l2 && l2.median / coll2,
        ratioOf: '÷ collection',
        target: { op: '≤', value: TARGETS.rssVsCollection },
      });
      rows.push({
        figure: `Peak RSS, replay (${two.name})`,
        unit: 'MB',
        stat: r2,
        ratio: r2 && r2.median / coll2,
        ratioOf: '÷ collection',
        target: { op: '≤', value: TARGETS.rssVsCollection },
      });
      if (l2 && liveRss1 && r2 && repRss1) {
        notes.push(
          `From 1× to 2×: the collection grew ${(coll2 / coll1).toFixed(2)}×, peak RSS of the live snapshot ${(l2.median / liveRss1.median).toFixed(2)}× and of replay ${(r2.median / repRss1.median).toFixed(2)}×.`,
        );
      }
      log(`[${elapsed()}] 2× site measured`);
    }
  } finally {
    await receivers?.close();
    for (const s of servers) await s.stop().catch(() => {});
    rmSync(workDir, { recursive: true, force: true });
  }
  const cpu = cpus();
  return {
    machine: {
      cpu: cpu[0]?.model.trim() ?? 'unknown',
      cores: cpu.length,
      memoryGB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      os: `${process.platform} ${osRelease()}`,
    },
    date: new Date().toISOString(),
    runs,
    sites,
    rows,
    hashChecks,
    notes,
    wallSeconds: (performance.now() - started) / 1000,
    ...(BIN !== DEFAULT_BIN ? { bin: BIN } : {}),
  };
}

// ---------------------------------------------------------------- report

function fmt(v: number, unit: 'ms' | 'MB'): string {
  return unit === 'ms' ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} MB`;
}

export function met(row: Row): boolean | undefined {
  if (!row.target || row.ratio === undefined) return undefined;
  return row.target.op === '≤' ? row.ratio <= row.target.value : row.ratio >= row.target.value;
}

export function renderResults(r: BenchResults): string {
  const lines: string[] = [];
  lines.push('# svc-snapshot benchmark results', '');
  lines.push(
    'Generated by `npm run bench` (bench/run.ts); do not edit by hand, except the section `## Kept or removed, by A/B`, which a run keeps as it is.',
    '',
  );
  lines.push(`- Date: ${r.date}`);
  lines.push(`- Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGB} GB, ${r.machine.os}`);
  lines.push(`- Node.js: ${r.machine.node}`);
  lines.push(`- Runs per figure: ${r.runs} (median, min, max); ratios are of medians`);
  lines.push(
    `- Server: the fake backend over HTTPS on 127.0.0.1 in its own process, ${LATENCY_MS} ms added to every response (test/fake/serve.ts), release ${RELEASE}`,
  );
  for (const s of r.sites) {
    const z = s.site.sizes;
    lines.push(
      `- Site ${s.name}: ${z.users} users; ${z.teams} teams of ${z.membersPerTeam} members; ${z.drives} drives; ${z.projects} projects with ${z.projectMemberships} memberships; ` +
        `${s.site.realms.length} realms each with ${z.imagesPerRealm} images, ${z.configsPerRealm} VM configs and ${z.activeVmsPerRealm} active VMs; ${z.bricks} bricks; ` +
        `${z.externalServers} external servers; ${z.certifications} user certifications; ${VARIETY ? 'text and shapes of a real site (test/fake/variety.ts); ' : ''}raw collection ${(s.collectionBytes / 1e6).toFixed(1)} MB`,
    );
  }
  if (r.bin) lines.push(`- CLI measured: ${r.bin} (not this repository's bin/svc-snapshot.js)`);
  lines.push(`- Bench wall time: ${r.wallSeconds.toFixed(0)} s`, '');
  lines.push('| figure | median | min | max | ratio | target | met |');
  lines.push('|---|---:|---:|---:|---:|---:|:---:|');
  for (const row of r.rows) {
    const s = row.stat;
    const ok = met(row);
    lines.push(
      `| ${row.figure} | ${s ? fmt(s.median, row.unit) : '—'} | ${s ? fmt(s.min, row.unit) : '—'} | ${s ? fmt(s.max, row.unit) : '—'} | ` +
        `${row.ratio !== undefined ? `${row.ratio.toFixed(2)} (${row.ratioOf})` : '—'} | ${row.target ? `${row.target.op} ${row.target.value}` : '—'} | ${ok === undefined ? '' : ok ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('', '## Notes', '');
  for (const n of r.notes) lines.push(`- ${n}`);
  lines.push('');
  return lines.join('\n');
}
