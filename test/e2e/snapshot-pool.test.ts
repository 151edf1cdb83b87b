/**
 * The export build on worker threads (--build-threads, src/exports/build-pool.ts),
 * through the binary: with no worker, one, two or more, a snapshot writes
 * the same files and says the same things, live and replayed, on good and on
 * damaged input. A lib/ without the worker: test/e2e/unbuilt.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { leftovers } from '../helpers/assert-output.js';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { startFakeSite, type FakeSite, type FakeSiteOptions } from '../helpers/fake-site.js';
import { unzip } from '../helpers/unzip.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { ALL_TYPES_TOKEN, PER_TYPE_TOKENS, perTypeTokenEnv } from '../fake/backend.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Every file of a snapshot directory, the manifest without what differs
 * between two runs (times taken). A workbook is its bytes' hash; of two live
 * runs (`live`), taken at different times, its parts' hashes without the
 * About sheet, which shows the time.
 */
function contents(dir: string, live = false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) {
    // raw/ is the collection's bytes: the manifest lists each file's sha256.
    if (f === 'raw') continue;
    if (f.endsWith('.xlsx')) {
      const bytes = readFileSync(join(dir, f));
      out[f] = live ? JSON.stringify([...unzip(bytes)].filter(([name]) => name !== 'xl/worksheets/sheet1.xml' && name !== 'docProps/core.xml').map(([name, part]) => [name, sha256(part)])) : sha256(bytes);
      continue;
    }
    const text = readFileSync(join(dir, f), 'utf8');
    if (f === '_snapshot-manifest.json') {
      const m = JSON.parse(text) as Record<string, unknown>;
      delete m.durationMs;
      delete m.time;
      for (const r of (m.routes as Array<Record<string, unknown>> | undefined) ?? []) delete r.durationMs;
      out[f] = JSON.stringify(m);
    } else out[f] = text;
  }
  return out;
}

function copyCollection(to: string): string {
  cpSync(RECORDING, to, { recursive: true });
  return to;
}

/** Rewrites a body file of a collection and its sha256 in the manifest, as if the server had sent these bytes. */
function replaceBody(dir: string, file: string, body: string): void {
  writeFileSync(join(dir, file), body);
  const path = join(dir, '_collection-manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as { routes: Array<{ file: string | null; sha256?: string; bytes?: number }> };
  const r = m.routes.find((x) => x.file === file)!;
  r.sha256 = createHash('sha256').update(body).digest('hex');
  r.bytes = Buffer.byteLength(body);
  writeFileSync(path, JSON.stringify(m, null, 2));
}

describe('the build on worker threads', () => {
  it('a replay writes the same files with --build-threads 0, 1, 2 and 5', async () => {
    const root = tmpDir();
    const got: Array<Record<string, string>> = [];
    for (const n of ['0', '1', '2', '5']) {
      const out = join(root, `t${n}`);
      const r = await runCli(['--replay', RECORDING, '--out-dir', out, '--quiet', '--build-threads', n]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      got.push(contents(out));
    }
    expect(Object.keys(got[0]!)).toHaveLength(16);
    for (const g of got.slice(1)) expect(g).toEqual(got[0]);
  });

  const LIVE_CASES: Array<[string, () => Promise<FakeSite>, string[], Record<string, string>]> = [
    // With spreadsheets: made by the workers too, once the exports built beside the downloads are written.
    ['a 3.14.1 backend with two realms (--format csv,xlsx)', () => startFakeSite({ realms: [{ id: 'libvirt', driver: 'libvirt' }, { id: 'altvirt', driver: 'altvirt' }] }), ['--format', 'csv,xlsx'], { SVC_TOKEN: TOKEN }],
    ['a 3.13.8 backend with per-type tokens and --realms', () => startFakeSite({ release: '3.13.8', tokens: PER_TYPE_TOKENS, realms: [{ id: 'libvirt', driver: 'libvirt' }, { id: 'altvirt', driver: 'altvirt' }] } as FakeSiteOptions), ['--realms', 'libvirt,altvirt'], perTypeTokenEnv()],
    // With raw/: built from the whole collection once it is in, its large lists read back from raw/ by whoever builds them.
    ['a 3.14.1 backend with lists over 256 KB (--raw)', () => startFakeSite({ sizes: { drives: 3000, users: 3000 } }), ['--raw'], { SVC_TOKEN: TOKEN }],
    [
      'a backend whose teams route fails and whose realms list is unusable (--allow-partial)',
      async () => {
        const s = await startFakeSite({ realms: [{ id: 'libvirt', driver: 'libvirt' }] });
        s.backend.setFault('teams', { statuses: [500], always: true });
        s.backend.setFault('realms', { statuses: [503], always: true });
        return s;
      },
      ['--allow-partial', '--retries', '0'],
      { SVC_TOKEN: TOKEN },
    ],
  ];

  it.each(LIVE_CASES)('a live snapshot of %s writes the same files on the main thread and on workers (beside the downloads, or after them with --raw)', async (_name, start, extra, env) => {
    site = await start();
    const root = tmpDir();
    const got: Array<{ code: number | null; files: Record<string, string> }> = [];
    for (const n of ['0', '3']) {
      const out = join(root, `t${n}`);
      const r = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--quiet', ...extra], { env: { ...env, SVC_BUILD_THREADS: n } });
      expect(r.code, r.stderr).not.toBe(1);
      got.push({ code: r.code, files: contents(out, true) });
    }
    if (extra.includes('--format')) expect(Object.keys(got[0]!.files).filter((f) => f.endsWith('.csv') || f.endsWith('.xlsx'))).toHaveLength(16);
    expect(got[1]).toEqual(got[0]);
    if (extra.includes('--raw')) {
      // Large enough to be read back from raw/ (256 KB and more), and raw/ the same bytes either way.
      expect(statSync(join(root, 't3', 'raw', 'api-drives.json')).size).toBeGreaterThan(256 * 1024);
      // The collection manifest aside: it holds the times of each run.
      const raw = (n: string) => Object.fromEntries(readdirSync(join(root, n, 'raw')).filter((f) => f !== '_collection-manifest.json').map((f) => [f, sha256(readFileSync(join(root, n, 'raw', f)))]));
      expect(raw('t3')).toEqual(raw('t0'));
    }
  });

  it('a damaged collection fails or warns the same way on the main thread and on workers', async () => {
    const root = tmpDir();
    const dir = copyCollection(join(root, 'raw'));
    // Not JSON where a list of drives is expected, and a user of the wrong shape.
    replaceBody(dir, 'api-drives.json', '<html>login</html>');
    const users = JSON.parse(readFileSync(join(dir, 'api-users.json'), 'utf8')) as Array<Record<string, unknown>>;
    users[0]!.email = 42;
    users[1]!.__proto__ = { polluted: 1 };
    replaceBody(dir, 'api-users.json', JSON.stringify(users));
    const results = [];
    for (const n of ['0', '2']) {
      const out = join(root, `t${n}`);
      const strict = await runCli(['--replay', dir, '--out-dir', `${out}-strict`, '--build-threads', n, '--allow-partial', '--strict']);
      const partial = await runCli(['--replay', dir, '--out-dir', out, '--build-threads', n, '--allow-partial']);
      const plain = await runCli(['--replay', dir, '--out-dir', `${out}-plain`, '--build-threads', n]);
      results.push({ strict, partial, plain, files: contents(out) });
    }
    const [main, pool] = results;
    expect(main!.plain.code).toBe(1);
    expect(main!.plain.stderr).toMatch(/GET \/api\/drives/);
    expect(main!.strict.code).toBe(1);
    expect(main!.strict.stderr).toMatch(/--strict: 1 schema problem/);
    expect(main!.partial.code).toBe(4);
    for (const k of ['plain', 'strict', 'partial'] as const) {
      expect(pool![k].code, k).toBe(main![k].code);
      // The one difference: the workers are named.
      expect(pool![k].stderr, k).toContain('on the main thread and 2 worker threads');
      expect(pool![k].stderr.replaceAll(`${root}/t2`, 'OUT').replace(' on the main thread and 2 worker threads', ''), k).toBe(main![k].stderr.replaceAll(`${root}/t0`, 'OUT'));
    }
    expect(pool!.files).toEqual(main!.files);
    // The spreadsheet worker has made some exports' forms while the build went on when --strict refuses its result: nothing is published, nothing left behind.
    const sheets = await runCli(['--replay', dir, '--out-dir', join(root, 'sheets'), '--allow-partial', '--strict', '--format', 'csv,xlsx']);
    expect(sheets.code).toBe(1);
    expect(sheets.stderr).toMatch(/--strict: 1 schema problem/);
    expect(sheets.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    expect(existsSync(join(root, 'sheets'))).toBe(false);
    expect(leftovers(root)).toEqual([]);
  });

  it('a replay of a large collection on the main thread and a worker (the main thread builds the largest part) writes what the main thread alone writes', async () => {
    const root = tmpDir();
    const dir = copyCollection(join(root, 'raw'));
    // The recording's drives, repeated under new ids and names (some outside ASCII): drives is then by far the largest part, the main thread's.
    const drives = JSON.parse(readFileSync(join(dir, 'api-drives.json'), 'utf8')) as Array<Record<string, unknown>>;
    const many: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 40_000; i++) many.push({ ...drives[i % drives.length]!, id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name: `drive-${i} ${'ü'.repeat(i % 7)}` });
    replaceBody(dir, 'api-drives.json', JSON.stringify(many));
    // With spreadsheets: the main thread takes the drives (the largest export), the worker the others, and the workbook waits for them in order.
    // By default the worker takes the small exports already while the build runs (each under a tenth of the collection); with a build worker, after it.
    const pooled = await runCli(['--replay', dir, '--out-dir', join(root, 'pooled'), '--build-threads', '1', '--format', 'csv,xlsx']);
    const main = await runCli(['--replay', dir, '--out-dir', join(root, 'main'), '--format', 'csv,xlsx']);
    expect(pooled.code).toBe(0);
    expect(main.code).toBe(0);
    expect(pooled.stderr).toContain('on the main thread and 1 worker thread');
    expect(pooled.stderr).toContain('writing csv and xlsx on the main thread and 1 worker thread');
    expect(main.stderr).not.toContain('worker thread');
    expect(contents(join(root, 'pooled'))).toEqual(contents(join(root, 'main')));
    // The worker did take exports while the build went on: a CSV file was done before the drives' export file, the build's last.
    const mtime = (f: string) => statSync(join(root, 'main', f)).mtimeMs;
    const files = readdirSync(join(root, 'main'));
    const drivesFile = files.find((f) => f.endsWith('-drives (') || /^\d+-drives \(.*\.json$/.test(f))!;
    expect(Math.min(...files.filter((f) => f.endsWith('.csv')).map(mtime))).toBeLessThan(mtime(drivesFile));
    // And convert (the main thread and its own worker) writes the same spreadsheets.
    const c = await runCli(['convert', join(root, 'main'), '--out-dir', join(root, 'convert'), '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    const made = contents(join(root, 'convert'));
    expect(Object.keys(made)).toHaveLength(16);
    for (const [f, v] of Object.entries(made)) expect(v, f).toBe(contents(join(root, 'main'))[f]);
    // The second largest export file changed after the snapshot: convert's main thread claims the largest, its worker the second largest, and
    // reads it; its refusal is the run's, said as the main thread says it (exit 1), and the main thread starts nothing more.
    const exportFiles = files.filter((x) => x.endsWith('.json') && !x.startsWith('_')).sort((a, b) => statSync(join(root, 'main', b)).size - statSync(join(root, 'main', a)).size);
    writeFileSync(join(root, 'main', exportFiles[1]!), `${readFileSync(join(root, 'main', exportFiles[1]!), 'utf8')} `);
    const bad = await runCli(['convert', join(root, 'main'), '--out-dir', join(root, 'bad')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/does not match the sha256 in _snapshot-manifest\.json; the file was changed after the snapshot was taken/);
    expect(bad.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    expect(leftovers(join(root, 'bad'))).toEqual([]);
  });

  it('the spreadsheets written with workers are the files the main thread alone writes (csv and xlsx, each alone and both)', async () => {
    const root = tmpDir();
    for (const format of ['csv,xlsx', 'csv', 'xlsx']) {
      const got: Array<Record<string, string>> = [];
      for (const n of ['0', '1', '3']) {
        const out = join(root, `${format.replace(',', '-')}-${n}`);
        const r = await runCli(['--replay', RECORDING, '--out-dir', out, '--quiet', '--build-threads', n, '--format', format, '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toBe('');
        // The files are listed in the same order too: CSV files in export order, then the workbook.
        got.push({ ...contents(out), summary: JSON.stringify((JSON.parse(r.stdout) as { spreadsheets: unknown }).spreadsheets) });
      }
      expect(Object.keys(got[0]!).filter((f) => f.endsWith('.csv'))).toHaveLength(format.includes('csv') ? 15 : 0);
      expect(Object.keys(got[0]!).filter((f) => f.endsWith('.xlsx'))).toHaveLength(format.includes('xlsx') ? 1 : 0);
      for (const g of got.slice(1)) expect(g, format).toEqual(got[0]);
      // The default has a worker for the spreadsheets too: `convert`, the main thread alone, writes the same files of the same exports.
      const converted = join(root, `${format.replace(',', '-')}-convert`);
      const c = await runCli(['convert', join(root, `${format.replace(',', '-')}-0`), '--out-dir', converted, '--format', format, '--quiet']);
      expect(c.code, c.stderr).toBe(0);
      const made = contents(converted);
      expect(Object.keys(made).sort()).toEqual(Object.keys(got[0]!).filter((f) => /\.(csv|xlsx)$/.test(f)).sort());
      for (const [f, v] of Object.entries(made)) expect(v, f).toBe(got[0]![f]);
    }
  });

  it('a bad --build-threads or SVC_BUILD_THREADS is a usage error (exit 2) before anything is read', async () => {
    const out = join(tmpDir(), 'snap');
    const flag = await runCli(['--replay', RECORDING, '--out-dir', out, '--build-threads', '-1']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--build-threads/);
    const env = await runCli(['--replay', RECORDING, '--out-dir', out], { env: { SVC_BUILD_THREADS: 'many' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/SVC_BUILD_THREADS/);
    expect(readdirSync(join(out, '..'))).toEqual([]);
  });

});
