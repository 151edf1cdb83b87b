/**
 * The workbook as an auditor sees it in LibreOffice: a workbook written by
 * writeSpreadsheets from a few records chosen for what spreadsheet programs
 * get wrong, opened by LibreOffice (headless) and read back as it shows the
 * cells (CSV of the values as shown) and as it holds the document (flat ODS:
 * properties, styles).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReadableManifest } from '../../src/manifests.js';
import { writeSpreadsheets, type SheetSink } from '../../src/sheets/write.js';
import { fodsViaLibreOffice, sheetsViaLibreOffice } from '../helpers/libreoffice.js';
import { tmpDir } from '../helpers/run-cli.js';
import { unzip } from '../helpers/unzip.js';

const TIME = '2026-11-21T02:00:00.000Z';
const LONG = `${'x'.repeat(32_766)}\u{1F600} and more after the cell's limit`;

const USERS = [
  {
    id: '007',
    phone: '+49 30 123456',
    text: 'line one\r\nline two\r\nline three',
    flag: true,
    bytes: 1_234_567_890,
    ratio: 0.5,
  },
  { id: 'u2', phone: '0049 30 123456', text: 'a lone\rcarriage return', flag: false, bytes: 12, ratio: 1.25 },
  { id: 'u3', phone: null, text: LONG, flag: true, bytes: 0, ratio: null },
  {
    id: 'u4',
    phone: '+4930',
    text: 'CR LF\r\n\r\nand a blank line, a\ttab & <markup>',
    flag: false,
    bytes: 987_654,
    ratio: 2,
  },
];

function manifest(): ReadableManifest {
  return {
    kind: 'snapshot',
    source: 'replay',
    tool: { name: 'svc-snapshot', version: '1.0.0' },
    baseUrl: 'https://platform.example.org',
    time: TIME,
    date: '2026-11-21',
    authMode: 'token',
    realms: { source: 'GET /api/realms', ids: [] },
    routes: [],
    exports: [
      { export: 'users', count: USERS.length, file: `${USERS.length}-users (11-21-2026).json`, available: true },
    ],
    nullFields: [],
    validation: { issues: 0, samples: [] },
    drift: [],
    complete: true,
  };
}

let xlsx: string;
let bytes: Buffer;
let shown: Map<string, string[][]>;
let fods: string;
let csvFods: string;
beforeAll(async () => {
  const dir = tmpDir('svc-workbook-');
  const parts: Buffer[] = [];
  const sink: SheetSink = async (_name, chunks) => {
    for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
  };
  await writeSpreadsheets({ manifest: manifest(), records: async () => USERS }, ['xlsx'], sink);
  bytes = Buffer.concat(parts);
  xlsx = join(dir, 'svc-snapshot-2026-11-21.xlsx');
  writeFileSync(xlsx, bytes);
  shown = sheetsViaLibreOffice(xlsx, dir);
  fods = fodsViaLibreOffice(xlsx, dir);
  // The CSV form of the same records, opened as a user opens it: the default import (comma, quote, UTF-8).
  const csvDir = tmpDir('svc-workbook-csv-');
  await writeSpreadsheets({ manifest: manifest(), records: async () => USERS }, ['csv'], async (name, chunks) => {
    const csvParts: Buffer[] = [];
    for await (const c of chunks) csvParts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
    writeFileSync(join(csvDir, name), Buffer.concat(csvParts));
  });
  csvFods = fodsViaLibreOffice(join(csvDir, '4-users (11-21-2026).csv'), csvDir, 'CSV:44,34,76,1');
}, 240_000);

const column = (name: string) => {
  const rows = shown.get('users')!;
  const i = rows[0]!.indexOf(name);
  return rows.slice(1).map((r) => r[i]);
};

describe('the workbook in LibreOffice', () => {
  it('shows every boolean of a column as TRUE or FALSE', () => {
    expect(column('flag')).toEqual(['TRUE', 'FALSE', 'TRUE', 'FALSE']);
  });

  it('shows whole numbers (bytes, counts) with thousands separators, and other numbers as they are', () => {
    expect(column('bytes')).toEqual(['1,234,567,890', '12', '0', '987,654']);
    expect(column('ratio')).toEqual(['0.5', '1.25', '', '2']);
  });

  it('keeps leading zeros and +49… texts exactly, where the CSV file opened with default import does not', () => {
    expect(column('id')).toEqual(['007', 'u2', 'u3', 'u4']);
    expect(column('phone')).toEqual(['+49 30 123456', '0049 30 123456', '', '+4930']);
    // What the README warns of: the same records' CSV file, imported with LibreOffice's defaults.
    const csvCells = [...csvFods.matchAll(/<text:p>([^<]*)<\/text:p>/g)].map((m) => m[1]);
    expect(csvCells).toContain('7');
    expect(csvCells).not.toContain('007');
    expect(csvCells).toContain('&apos;+49 30 123456');
  });

  it('gives back every carriage return as written: CR LF, a lone CR, CR LF beside a tab and markup', () => {
    const texts = column('text');
    expect(texts[0]).toBe('line one\r\nline two\r\nline three');
    expect(texts[1]).toBe('a lone\rcarriage return');
    expect(texts[3]).toBe('CR LF\r\n\r\nand a blank line, a\ttab & <markup>');
  });

  it('cuts a text at the cell limit on a character boundary: no half of an emoji, no U+FFFD', () => {
    const cut = column('text')[2]!;
    expect(cut).toBe('x'.repeat(32_766));
    expect(cut).not.toContain('\uFFFD');
  });

  it('wraps multi-line texts within their cells', () => {
    const cell = /<table:table-cell table:style-name="([^"]+)"[^>]*>\s*<text:p>line one/.exec(fods);
    expect(cell, 'the multi-line cell has a style').not.toBeNull();
    const style = new RegExp(`<style:style style:name="${cell![1]}"[\\s\\S]*?</style:style>`).exec(fods);
    expect(style?.[0]).toMatch(/fo:wrap-option="wrap"/);
  });

  it("has document properties: title, creator and the snapshot's time (not the time the file was made)", () => {
    const meta = /<office:meta>([\s\S]*?)<\/office:meta>/.exec(fods)?.[1] ?? '';
    expect(meta).toContain('<dc:title>svc-snapshot of https://platform.example.org, 2026-11-21</dc:title>');
    expect(meta).toContain('<meta:initial-creator>svc-snapshot 1.0.0</meta:initial-creator>');
    expect(meta).toContain('<meta:creation-date>2026-11-21T02:00:00</meta:creation-date>');
    const entries = unzip(bytes);
    expect(entries.get('[Content_Types].xml')!.toString()).toContain(
      '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>',
    );
    expect(entries.get('_rels/.rels')!.toString()).toContain(
      'relationships/metadata/core-properties" Target="docProps/core.xml"',
    );
  });

  it("is the same bytes when written again (the properties carry the snapshot's time)", async () => {
    const parts: Buffer[] = [];
    await writeSpreadsheets({ manifest: manifest(), records: async () => USERS }, ['xlsx'], async (_n, chunks) => {
      for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
    });
    expect(Buffer.concat(parts).equals(readFileSync(xlsx))).toBe(true);
  });
});
