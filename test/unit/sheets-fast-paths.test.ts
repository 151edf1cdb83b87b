/**
 * The spreadsheet writers' fast paths give exactly what the plain code they
 * stand for gives: for every UTF-16 code unit and for arbitrary text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cellOf, type SheetColumn } from '../../src/sheets/columns.js';
import { BOM, csvCell, csvChunks, csvField, guardText } from '../../src/sheets/csv.js';
import { cellWidth, escapeXmlText, xmlText } from '../../src/sheets/xlsx.js';

/** Each code unit alone and between text that could complete an escape (`_x0041_`) or a surrogate pair. */
function everyCodeUnitInContext(): string[] {
  const out: string[] = [];
  for (let c = 0; c <= 0xffff; c++) {
    const ch = String.fromCharCode(c);
    out.push(ch, `a${ch}x0041_`, `${ch}\uDE00`, `\uD83D${ch}`);
  }
  return out;
}

describe('fast paths of the spreadsheet writers', () => {
  it('xmlText escapes exactly what the full escape does, for every code unit and any text', () => {
    expect(everyCodeUnitInContext().filter((t) => xmlText(t) !== escapeXmlText(t))).toEqual([]);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('_', 'x', '0', 'A', '&', '\r', '\uD800', '\uDC00', 'é', ' ') })), (t) => xmlText(t) === escapeXmlText(t)),
      { numRuns: 2000 },
    );
  });

  it('csvChunks writes what csvCell gives for each cell and measures what cellWidth gives, in one pass', () => {
    const columns: SheetColumn[] = [
      { header: 'v', column: 'v', type: 'value' },
      { header: 'w', column: 'w', type: 'value' },
      { header: 't', column: 't', type: 'timestamp' },
      { header: 'm.k', column: 'm', type: 'entries', key: 'k' },
    ];
    const scalar = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(-0, 1e21, 1.5e-7, 4294967296000),
      fc.string({ unit: fc.constantFrom('a', '"', ',', '\r', '\n', '=', '-', '+', '@', '\t', 'é', '😀') }),
    );
    const record = fc.record({
      v: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })),
      w: scalar,
      t: fc.oneof(scalar, fc.integer({ min: -8.64e15, max: 8.64e15 })),
      m: fc.oneof(fc.constant(null), fc.array(fc.constantFrom('k=1', 'k=-2.5', 'k=x', 'j=3', 'k=', 'k=1e400'), { maxLength: 3 })),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 700 }), (records) => {
        const widths = columns.map((c) => c.header.length);
        const text = [...csvChunks(columns, records, widths)].join('');
        const expectedWidths = columns.map((c) => c.header.length);
        const lines = records.map((r) =>
          columns
            .map((c, j) => {
              const cell = cellOf(c, r);
              expectedWidths[j] = Math.max(expectedWidths[j]!, cellWidth(cell));
              return csvCell(cell);
            })
            .join(','),
        );
        const header = columns.map((c) => csvField(guardText(c.header))).join(',');
        expect(text).toBe(`${BOM}${header}\r\n${lines.map((l) => `${l}\r\n`).join('')}`);
        expect(widths).toEqual(expectedWidths);
      }),
      { numRuns: 100 },
    );
  });
});
