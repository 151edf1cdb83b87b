import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { expectNoSecrets, expectPrivateModes, leftovers } from '../helpers/assert-output.js';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { generateDataset } from '../fake/dataset.js';
import { parseCsv } from '../helpers/csv-parse.js';
import { sheetsViaLibreOffice } from '../helpers/libreoffice.js';
import { expectedCell, expectedHeader, type Rec } from '../helpers/sheet-expectations.js';
import { ConvertSummary, SnapshotSummary } from '../../src/summaries/schemas.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');

/** Texts a spreadsheet program would run or misread if they became formulas or lost their control characters. */
const HOSTILE = [
  '=1+1',
  '+1+1',
  '-1+1',
  '@SUM(1,1)',
  '\t=1+1',
  '\r=1+1',
  '=HYPERLINK("http://127.0.0.1/x","click")',
  'a,"b"\nc',
  '_x0041_ stays',
  'bell\u0007here',
];

let site: FakeSite | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

interface Manifest {
  date: string;
  exports: Array<{ export: string; file: string; count: number; available: boolean }>;
}

function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as Manifest;
}

function records(dir: string, file: string): Rec[] {
  return JSON.parse(readFileSync(join(dir, file), 'utf8')) as Rec[];
}

function columnsOf(exportName: string, recs: readonly Rec[], header: readonly string[]): string[] {
  // An empty export has no record to take the columns from: its header is checked against the CSV's.
  return recs.length > 0 ? Object.keys(recs[0]!) : [...header];
}

function hashes(dir: string): Map<string, string> {
  return new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [
        f,
        createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex'),
      ]),
  );
}

/** Every CSV file against its JSON export: BOM, CRLF, header, one row per record, every value. */
function checkCsvFiles(dir: string): void {
  const m = manifestOf(dir);
  for (const e of m.exports) {
    const csvName = e.file.replace(/\.json$/, '.csv');
    const bytes = readFileSync(join(dir, csvName));
    expect(bytes.subarray(0, 3).toString('hex'), `${csvName} starts with a UTF-8 BOM`).toBe('efbbbf');
    const text = bytes.toString('utf8').slice(1);
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(text);
    const recs = records(dir, e.file);
    const header = expectedHeader(e.export, columnsOf(e.export, recs, rows[0]!), recs);
    expect(rows[0], `${csvName} header`).toEqual(header);
    expect(rows.length - 1, `${csvName} rows`).toBe(recs.length);
    recs.forEach((r, i) =>
      expect(rows[i + 1], `${csvName} row ${i + 1}`).toEqual(header.map((h) => expectedCell(e.export, h, r, 'csv'))),
    );
  }
}

/** The workbook as LibreOffice reads it: About first, then one sheet per export equal to its JSON export. */
function checkWorkbook(dir: string, xlsxDir = dir): Map<string, string[][]> {
  const m = manifestOf(dir);
  const xlsx = join(xlsxDir, `svc-snapshot-${m.date}.xlsx`);
  const sheets = sheetsViaLibreOffice(xlsx, tmpDir('svc-lo-'));
  expect([...sheets.keys()].sort()).toEqual(['About', ...m.exports.map((e) => e.export)].sort());
  for (const e of m.exports) {
    const rows = sheets.get(e.export)!;
    const recs = records(dir, e.file);
    const header = expectedHeader(e.export, columnsOf(e.export, recs, rows[0]!), recs);
    expect(rows[0], `${e.export} header`).toEqual(header);
    expect(rows.length - 1, `${e.export} rows`).toBe(recs.length);
    recs.forEach((r, i) =>
      expect(rows[i + 1], `${e.export} row ${i + 1}`).toEqual(
        header.map((h) => expectedCell(e.export, h, r, 'libreoffice')),
      ),
    );
  }
  return sheets;
}

describe('spreadsheets of a live snapshot (--format csv,xlsx)', () => {
  it('publishes CSV files and a workbook that LibreOffice reads back equal to the JSON exports, with hostile names kept as text', async () => {
    const dataset = generateDataset({ seed: 14 });
    dataset.teams.forEach((t, i) => (t.name = HOSTILE[i % HOSTILE.length]!));
    dataset.users.forEach((u, i) => {
      u.firstName = HOSTILE[(i + 3) % HOSTILE.length]!;
      u.lastName = HOSTILE[(i + 5) % HOSTILE.length]!;
    });
    dataset.projects.forEach((p, i) => (p.desc = HOSTILE[(i + 7) % HOSTILE.length]!));
    // Texts a CSV opened with default import changes (leading zeros, +49…) and a CR LF: the workbook keeps each exactly.
    ['two\r\nlines', '+49 30 123456', '007'].forEach((t, i) => (dataset.users[i]!.lastName = t));
    site = await startFakeSite({ dataset });
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await runCli(
      ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--format', 'csv,xlsx', '--json', '--quiet'],
      { env: { SVC_TOKEN: TOKEN } },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const summary = SnapshotSummary.parse(JSON.parse(res.stdout));
    const m = manifestOf(out);
    expect(summary.spreadsheets).toEqual([
      ...m.exports.map((e) => ({ format: 'csv', file: e.file.replace(/\.json$/, '.csv'), export: e.export })),
      { format: 'xlsx', file: `svc-snapshot-${m.date}.xlsx` },
    ]);
    expectNoSecrets([TOKEN], [out], [res.stdout, res.stderr]);
    expectPrivateModes(out);
    expect(leftovers(parent)).toEqual([]);
    checkCsvFiles(out);
    const sheets = checkWorkbook(out);
    // The hostile texts came back as texts: had one become a formula, LibreOffice would show its result.
    const users = sheets.get('users')!;
    const names = users.slice(1).map((r) => r[users[0]!.indexOf('firstName')]);
    for (const h of HOSTILE) expect(names).toContain(h);
    expect(names).not.toContain('2');
    const about = sheets.get('About')!;
    expect(about[1]).toEqual(['Base URL', site.url, ...about[1]!.slice(2).map(() => '')]);
    expect(about.some((r) => r[0] === 'Timestamps' && /UTC/.test(r[1]!))).toBe(true);
    for (const e of m.exports)
      expect(
        about.some(
          (r) =>
            r[0] === e.export && r[1] === e.count.toLocaleString('en-US') && r[2] === String(e.available).toUpperCase(),
        ),
      ).toBe(true);
  }, 600_000);

  it('refuses an unknown --format before it makes a request (exit 2)', async () => {
    site = await startFakeSite();
    const out = join(tmpDir(), 'snap');
    const res = await runCli(
      ['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', out, '--format', 'csv,ods'],
      { env: { SVC_TOKEN: TOKEN } },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /--format takes a comma-separated list of json, csv, xlsx, html; "ods" is not one of them/,
    );
    expect(site.backend.requests).toHaveLength(0);
  });
});

describe('svc-snapshot convert', () => {
  it('writes the same files as --format for an existing snapshot, leaving its own files untouched', async () => {
    const parent = tmpDir();
    const direct = join(parent, 'direct');
    const plain = join(parent, 'plain');
    expect(
      (await runCli(['--replay', RECORDING, '--out-dir', direct, '--format', 'json,csv,xlsx', '--quiet'])).code,
    ).toBe(0);
    expect((await runCli(['--replay', RECORDING, '--out-dir', plain, '--quiet'])).code).toBe(0);
    const before = hashes(plain);
    const manifestBefore = readFileSync(join(plain, '_snapshot-manifest.json'));
    const res = await runCli(['convert', plain, '--json', '--quiet']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(hashes(plain)).toEqual(before);
    const summary = ConvertSummary.parse(JSON.parse(res.stdout));
    expect(summary.files.map((f) => f.file).sort()).toEqual(
      readdirSync(plain)
        .filter((n) => n.endsWith('.csv') || n.endsWith('.xlsx'))
        .sort(),
    );
    expect(readFileSync(join(plain, '_snapshot-manifest.json'))).toEqual(manifestBefore);
    // The same snapshot gives the same bytes, whichever way it was asked for.
    for (const f of readdirSync(direct).filter((n) => n.endsWith('.csv') || n.endsWith('.xlsx'))) {
      expect(readFileSync(join(plain, f)).equals(readFileSync(join(direct, f))), f).toBe(true);
      expect(statSync(join(plain, f)).mode & 0o777).toBe(0o600);
    }
    expect(readdirSync(plain).filter((n) => n.startsWith('.'))).toEqual([]);
    checkCsvFiles(plain);
    checkWorkbook(plain);
  }, 600_000);

  it('writes into --out-dir, and xlsx alone when asked', async () => {
    const parent = tmpDir();
    const snap = join(parent, 'snap');
    expect((await runCli(['--replay', RECORDING, '--out-dir', snap, '--quiet'])).code).toBe(0);
    const out = join(parent, 'sheets');
    const res = await runCli(['convert', snap, '--format', 'xlsx', '--out-dir', out]);
    expect(res.code).toBe(0);
    const m = manifestOf(snap);
    expect(readdirSync(out)).toEqual([`svc-snapshot-${m.date}.xlsx`]);
    expect(readdirSync(snap).some((f) => f.endsWith('.xlsx') || f.endsWith('.csv'))).toBe(false);
    checkWorkbook(snap, out);
  }, 600_000);

  it('reads export files only as regular files: a symbolic link is refused (exit 1) and nothing is written', async () => {
    const parent = tmpDir();
    const snap = join(parent, 'snap');
    expect((await runCli(['--replay', RECORDING, '--out-dir', snap, '--quiet'])).code).toBe(0);
    const secret = join(parent, 'secret.json');
    writeFileSync(secret, '[{"id":"not part of the snapshot"}]');
    const users = manifestOf(snap).exports.find((e) => e.export === 'users')!.file;
    unlinkSync(join(snap, users));
    symlinkSync(secret, join(snap, users));
    const out = join(parent, 'out');
    const res = await runCli(['convert', snap, '--out-dir', out]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/is a symbolic link/);
    expect(res.stderr).not.toMatch(/not part of the snapshot/);
    // Nothing half written: the --out-dir it made is gone with the files written before the refusal.
    expect(existsSync(out)).toBe(false);
  });

  it('checks each export against the sha256 the manifest carries', async () => {
    const parent = tmpDir();
    const snap = join(parent, 'snap');
    expect((await runCli(['--replay', RECORDING, '--out-dir', snap, '--quiet'])).code).toBe(0);
    const path = join(snap, '_snapshot-manifest.json');
    const m = JSON.parse(readFileSync(path, 'utf8')) as { exports: Array<{ file: string; sha256?: string }> };
    for (const e of m.exports)
      e.sha256 = createHash('sha256')
        .update(readFileSync(join(snap, e.file)))
        .digest('hex');
    writeFileSync(path, JSON.stringify(m));
    expect((await runCli(['convert', snap, '--format', 'csv', '--out-dir', join(parent, 'ok')])).code).toBe(0);
    const drives = m.exports.find((e) => e.file.includes('-drives ('))!.file;
    writeFileSync(join(snap, drives), readFileSync(join(snap, drives), 'utf8').replace('"id"', '"id" '));
    const res = await runCli(['convert', snap, '--out-dir', join(parent, 'bad')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/does not match the sha256/);
    // Every file changed but the largest (the main thread's first): whichever thread reads a changed one says the same (the worker's case, on a large export: snapshot-pool.test.ts).
    const sizes = m.exports.map((e) => readFileSync(join(snap, e.file)).length);
    const largest = m.exports[sizes.indexOf(Math.max(...sizes))]!.file;
    writeFileSync(join(snap, largest), readFileSync(join(snap, largest), 'utf8').replace('"id" ', '"id"'));
    for (const e of m.exports)
      if (e.file !== largest) writeFileSync(join(snap, e.file), `${readFileSync(join(snap, e.file), 'utf8')} `);
    const worker = await runCli(['convert', snap, '--out-dir', join(parent, 'bad2')]);
    expect(worker.code).toBe(1);
    expect(worker.stderr).toMatch(
      /does not match the sha256 in _snapshot-manifest\.json; the file was changed after the snapshot was taken/,
    );
    expect(worker.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    // Nothing half written is left: no file converted before the failure, no temporary file, not the --out-dir it made.
    expect(existsSync(join(parent, 'bad2'))).toBe(false);
  });

  it('says what is wrong with its arguments (exit 2)', async () => {
    const dir = tmpDir();
    const notSnapshot = await runCli(['convert', dir]);
    expect(notSnapshot.code).toBe(2);
    expect(notSnapshot.stderr).toMatch(/has no readable _snapshot-manifest.json/);
    const missing = await runCli(['convert', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
    const json = await runCli(['convert', dir, '--format', 'json']);
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/convert writes csv and xlsx/);
    for (const r of [notSnapshot, missing, json]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
