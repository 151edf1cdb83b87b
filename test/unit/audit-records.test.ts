import { describe, expect, it } from 'vitest';
import { summariseAlerts } from '../../src/audit/alerts.js';
import { queryFileText, rowsToRecords } from '../../src/audit/records.js';
import { describeNotSpreadsheet, isSpreadsheet } from '../../src/audit/fetch.js';
import { makeXlsx } from '../fake/audit-xlsx.js';
import { crc32, inflateRawSync } from 'node:zlib';

describe('query rows as records', () => {
  it('keys each row by returnNames, padding short rows and keeping extra values', () => {
    expect(rowsToRecords(['a', 'b'], [[1, 2], [3], [4, 5, 6]])).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: null },
      { a: 4, b: 5, _2: 6 },
    ]);
    expect(rowsToRecords(['x', 'x'], [[1, 2]])).toEqual([{ x: 1, x_2: 2 }]);
  });

  it('writes the rows exactly as received beside the records', () => {
    const raw = '[[1.0, "a"],\n [2e3,"b"]]';
    const text = queryFileText(
      {
        query: 'q',
        name: 'Q',
        endDate: '2026-11-21',
        params: { limit: 2 },
        returnNames: ['n', 's'],
        returnTypes: ['float', 'string'],
      },
      raw,
      rowsToRecords(['n', 's'], JSON.parse(raw)),
    );
    expect(text).toContain('"rows": [[1.0, "a"],\n [2e3,"b"]],');
    const parsed = JSON.parse(text);
    expect(Object.keys(parsed)).toEqual([
      'query',
      'name',
      'endDate',
      'params',
      'returnNames',
      'returnTypes',
      'rows',
      'records',
    ]);
    expect(parsed.records).toEqual([
      { n: 1, s: 'a' },
      { n: 2000, s: 'b' },
    ]);
  });
});

describe('alert summary', () => {
  it('counts by severity from the alert-type map and by type, unknown types apart', () => {
    const types = {
      a: { name: 'A', severity: 'high' as const },
      b: { name: 'B', severity: 'info' as const },
    };
    const s = summariseAlerts(
      [{ type: 'a' }, { type: 'b' }, { type: 'a' }, { type: 'zzz' }, { type: 'toString' }],
      types,
    );
    expect(s.total).toBe(5);
    expect(s.bySeverity).toEqual({ critical: 0, high: 2, medium: 0, low: 0, info: 1, unknown: 2 });
    expect(s.byType).toEqual([
      { type: 'a', name: 'A', severity: 'high', count: 2 },
      { type: 'b', name: 'B', severity: 'info', count: 1 },
      { type: 'toString', name: null, severity: 'unknown', count: 1 },
      { type: 'zzz', name: null, severity: 'unknown', count: 1 },
    ]);
  });
});

/** Reads a zip's entries through its central directory and checks each one's CRC. */
function unzip(buf: Buffer): Map<string, string> {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    expect(buf.readUInt32LE(at)).toBe(0x02014b50);
    const size = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.subarray(at + 46, at + 46 + nameLen).toString('utf8');
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = inflateRawSync(buf.subarray(dataAt, dataAt + size));
    expect(crc32(data)).toBe(buf.readUInt32LE(at + 16));
    out.set(name, data.toString('utf8'));
    at += 46 + nameLen;
  }
  return out;
}

describe('spreadsheet check', () => {
  it("accepts the fake service's workbook, a zip of the OOXML parts", () => {
    const xlsx = makeXlsx('Report', [
      ['name', 'n'],
      ['a & b', 1],
    ]);
    expect(isSpreadsheet(xlsx)).toBe(true);
    const parts = unzip(xlsx);
    expect([...parts.keys()]).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/workbook.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/worksheets/sheet1.xml',
    ]);
    expect(parts.get('xl/worksheets/sheet1.xml')).toContain('<t>a &amp; b</t>');
    expect(makeXlsx('Report', [['x']]).equals(makeXlsx('Report', [['x']]))).toBe(true);
  });

  it('describes what arrived instead', () => {
    const body = Buffer.from('{"error":"report engine unavailable"}');
    expect(isSpreadsheet(body)).toBe(false);
    expect(describeNotSpreadsheet(body, 'application/json; charset=utf-8')).toBe(
      `${body.length} bytes of JSON (application/json) starting "{"error":"report engine unavailable"}"`,
    );
    expect(describeNotSpreadsheet(Buffer.from('<html>login</html>'), undefined)).toMatch(
      /^18 bytes of HTML or XML starting/,
    );
    expect(describeNotSpreadsheet(Buffer.alloc(0), undefined)).toBe('an empty body');
    expect(isSpreadsheet(Buffer.from([0x50, 0x4b, 0x05, 0x06]))).toBe(false);
  });
});
