import { describe, expect, it } from 'vitest';
import { csvCell, csvChunks, csvField, guardText } from '../../src/sheets/csv.js';
import type { SheetColumn } from '../../src/sheets/columns.js';
import { parseCsv } from '../helpers/csv-parse.js';

const col = (header: string, type: SheetColumn['type'] = 'value', key?: string): SheetColumn => ({
  header,
  column: header.split('.')[0]!,
  type,
  ...(key !== undefined ? { key } : {}),
});

describe('the CSV writer (RFC 4180)', () => {
  it('quotes exactly the fields that hold a comma, a double quote, CR or LF, doubling the quotes', () => {
    expect(csvField('plain text')).toBe('plain text');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(' spaces kept ')).toBe(' spaces kept ');
  });

  it('prefixes every text a spreadsheet would take for a formula with an apostrophe, and nothing else', () => {
    for (const t of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1']) expect(guardText(t)).toBe(`'${t}`);
    for (const t of ['1+1', 'a=b', "'quoted", '', ' =1']) expect(guardText(t)).toBe(t);
    // Numbers are numbers, not texts: a negative number is written as it is.
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('-5')).toBe("'-5");
    expect(csvCell('\r=1')).toBe(`"'\r=1"`);
  });

  it('writes null as an empty field, booleans and numbers as JSON does, date-times as ISO 8601 UTC', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(0.5)).toBe('0.5');
    expect(csvCell({ ms: 1_763_690_400_123 })).toBe('2025-11-21T02:00:00.123Z');
  });

  it('writes a BOM, a CRLF-terminated header and one row per record that an RFC 4180 reader gets back', () => {
    const columns = [
      col('id'),
      col('name'),
      col('created', 'timestamp'),
      col('tags'),
      col('quota.ssd', 'entries', 'ssd'),
      col('ok'),
    ];
    const records = [
      { id: 'a', name: 'Zoë, "the" =boss', created: 0, tags: ['x', 'y'], quota: ['hdd=1', 'ssd=2'], ok: true },
      { id: 'b', name: 'line\r\nbreak', created: null, tags: [], quota: null, ok: false },
    ];
    const text = [...csvChunks(columns, records)].join('');
    expect(text.startsWith('\uFEFFid,name,created,tags,quota.ssd,ok\r\n')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(parseCsv(text.slice(1))).toEqual([
      ['id', 'name', 'created', 'tags', 'quota.ssd', 'ok'],
      ['a', 'Zoë, "the" =boss', '1970-01-01T00:00:00.000Z', 'x; y', '2', 'true'],
      ['b', 'line\r\nbreak', '', '', '', 'false'],
    ]);
  });

  it('guards header names too', () => {
    expect([...csvChunks([col('=cmd')], [])].join('')).toBe("\uFEFF'=cmd\r\n");
  });
});
