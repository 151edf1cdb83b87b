/**
 * `npm run bench -- --huge`: a collection whose `GET /api/drives` body is
 * about 650 MB, longer than V8's longest string (bench/workload.ts,
 * HUGE_DRIVES). The fake backend serves it over HTTPS; the real CLI collects
 * it, snapshots it live, and replays it, each measured for time and peak RSS
 * (the replay's against the drives body: ≤ HUGE_RSS_VS_BODY). The exports of
 * the live snapshot and the replays must be byte-identical, and, on the
 * first HUGE_IDENTITY_BYTES of the drives body (short enough for the old
 * way), identical to the whole-body parse (bench/whole-vs-slices.mjs).
 * Takes several minutes and about 4 GB of memory; not part of the default
 * run. Files go under $TMPDIR.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  cpSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, release as osRelease, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  REPO_ROOT,
  dirBytes,
  exportHashes,
  run,
  sameHashes,
  startServer,
  stat,
  type BenchResults,
  type Row,
  type Server,
} from './harness.js';
import {
  HUGE_DRIVES,
  HUGE_IDENTITY_BYTES,
  HUGE_OTHERS_FACTOR,
  HUGE_RSS_VS_BODY,
  LATENCY_MS,
  realms,
  scaled,
  type Site,
} from './workload.js';

const BIN = join(REPO_ROOT, 'bin', 'svc-snapshot.js');
const DRIVES_ROUTE = 'GET /api/drives';

export function hugeSite(drives = HUGE_DRIVES): Site {
  return {
    name: `huge (${drives.toLocaleString('en')} drives)`,
    sizes: { ...scaled(HUGE_OTHERS_FACTOR), drives },
    realms: realms(),
  };
}

interface RouteEntry {
  route: string;
  file: string | null;
  bytes?: number;
  sha256?: string;
}

/**
 * A copy of the raw collection whose drives body is its first elements up to
 * about `limit` bytes: what the whole-body parse can still read.
 */
function shortenedCollection(raw: string, out: string, limit: number): number {
  cpSync(raw, out, { recursive: true });
  const manifestFile = join(out, '_collection-manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { routes: RouteEntry[] };
  const drives = manifest.routes.find((r) => r.route === DRIVES_ROUTE)!;
  const fd = openSync(join(raw, drives.file!), 'r');
  const head = Buffer.allocUnsafe(limit);
  const got = readSync(fd, head, 0, limit, 0);
  closeSync(fd);
  // `},{"id":` cannot be inside a string (its quotes would be escaped): it is where one drive ends and the next begins.
  const cut = got < limit ? -1 : head.subarray(0, got).lastIndexOf('},{"id":');
  const body = cut < 0 ? head.subarray(0, got) : Buffer.concat([head.subarray(0, cut + 1), Buffer.from(']')]);
  writeFileSync(join(out, drives.file!), body);
  drives.bytes = body.length;
  drives.sha256 = createHash('sha256').update(body).digest('hex');
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  return body.length;
}

export async function runHuge(opts: {
  runs: number;
  drives?: number;
  log: (line: string) => void;
}): Promise<BenchResults> {
  const started = performance.now();
  const { log } = opts;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-huge-'));
  const rows: Row[] = [];
  const notes: string[] = [];
  const site = hugeSite(opts.drives);
  let server: Server | undefined;
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  let collectionBytes = 0;
  try {
    log(`generating the ${site.name} site (the server serialises every body before it answers)`);
    server = await startServer(site, LATENCY_MS, log);
    const s = server;
    const env = { SVC_TOKEN: s.token };
    // A 650 MB body takes longer than the default 30 s on a busy machine (the README's advice for very large lists).
    const remote = ['--base-url', s.url, '--ca-file', s.caFile, '--quiet', '--timeout', '600'];

    const raw = join(workDir, 'raw');
    const collected = await run([BIN, 'collect', ...remote, '--out-dir', raw], { env, rss: true, workDir });
    collectionBytes = dirBytes(raw);
    const manifest = JSON.parse(readFileSync(join(raw, '_collection-manifest.json'), 'utf8')) as {
      routes: RouteEntry[];
    };
    const drivesEntry = manifest.routes.find((r) => r.route === DRIVES_ROUTE)!;
    const bodyBytes = statSync(join(raw, drivesEntry.file!)).size;
    const body = bodyBytes / 1e6;
    log(
      `[${elapsed()}] collected: drives body ${body.toFixed(1)} MB, collection ${(collectionBytes / 1e6).toFixed(1)} MB`,
    );

    const live = join(workDir, 'live');
    const snap = await run([BIN, ...remote, '--out-dir', live], { env, rss: true, workDir });
    const liveHashes = exportHashes(live);
    rmSync(live, { recursive: true, force: true });
    await s.stop();
    server = undefined;
    log(
      `[${elapsed()}] live snapshot: ${(snap.ms / 1000).toFixed(1)} s, peak RSS ${(snap.maxRss! / 1e6).toFixed(0)} MB`,
    );

    const replayMs: number[] = [];
    const replayRss: number[] = [];
    let identical = true;
    for (let r = 0; r < opts.runs; r++) {
      const out = join(workDir, `replay-${r}`);
      const rp = await run([BIN, '--replay', raw, '--out-dir', out, '--quiet'], { rss: true, workDir });
      replayMs.push(rp.ms);
      replayRss.push(rp.maxRss!);
      if (!sameHashes(liveHashes, exportHashes(out))) identical = false;
      rmSync(out, { recursive: true, force: true });
      log(
        `[${elapsed()}] replay ${r + 1}/${opts.runs}: ${(rp.ms / 1000).toFixed(1)} s, peak RSS ${(rp.maxRss! / 1e6).toFixed(0)} MB`,
      );
    }
    notes.push(
      identical
        ? 'The live snapshot and every replay wrote byte-identical exports.'
        : '**The live snapshot and a replay wrote different exports.**',
    );

    const short = join(workDir, 'raw-short');
    const shortBytes = shortenedCollection(raw, short, HUGE_IDENTITY_BYTES);
    const cmp = await run([join(REPO_ROOT, 'bench', 'whole-vs-slices.mjs'), short], { workDir });
    const verdict = JSON.parse(cmp.stdout) as {
      exports: number;
      differing: string[];
      summaryIdentical: boolean;
      drives: string;
    };
    rmSync(short, { recursive: true, force: true });
    const same = verdict.differing.length === 0 && verdict.summaryIdentical;
    notes.push(
      same
        ? `Whole body against slices, on the first ${(shortBytes / 1e6).toFixed(1)} MB of the drives body (${verdict.drives.split(' ')[0]} drives): all ${verdict.exports} exports and the validation, drift and nulls byte-identical.`
        : `**Whole body against slices, on the first ${(shortBytes / 1e6).toFixed(1)} MB of the drives body: ${verdict.differing.length ? `exports ${verdict.differing.join(', ')} differ` : 'the build summaries differ'}.**`,
    );
    log(`[${elapsed()}] whole body against slices: ${same ? 'identical' : 'DIFFERENT'}`);

    const mb = (xs: number[]) => xs.map((x) => x / 1e6);
    rows.push({ figure: `${DRIVES_ROUTE} body`, unit: 'MB', stat: stat([body]) });
    rows.push({ figure: 'Live collect', unit: 'ms', stat: stat([collected.ms]) });
    rows.push({
      figure: 'Peak RSS, live collect',
      unit: 'MB',
      stat: stat(mb([collected.maxRss!])),
      ratio: collected.maxRss! / bodyBytes,
      ratioOf: '÷ drives body',
    });
    rows.push({ figure: 'Live snapshot', unit: 'ms', stat: stat([snap.ms]) });
    rows.push({
      figure: 'Peak RSS, live snapshot',
      unit: 'MB',
      stat: stat(mb([snap.maxRss!])),
      ratio: snap.maxRss! / bodyBytes,
      ratioOf: '÷ drives body',
    });
    const rt = stat(replayMs);
    rows.push({ figure: '--replay of the collection', unit: 'ms', stat: rt });
    const rr = stat(mb(replayRss));
    rows.push({
      figure: 'Peak RSS, --replay',
      unit: 'MB',
      stat: rr,
      ratio: rr && rr.median / body,
      ratioOf: '÷ drives body',
      target: { op: '≤', value: HUGE_RSS_VS_BODY },
    });
    if (!identical || !same)
      rows.push({
        figure: 'Exports byte-identical (live, replays, whole body)',
        unit: 'MB',
        stat: undefined,
        ratio: 0,
        ratioOf: 'no',
        target: { op: '≥', value: 1 },
      });
  } finally {
    if (server) await server.stop().catch(() => {});
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
    runs: opts.runs,
    sites: [{ name: site.name, site, collectionBytes }],
    rows,
    hashChecks: [],
    notes,
    wallSeconds: (performance.now() - started) / 1000,
  };
}
