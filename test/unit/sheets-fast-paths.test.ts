/**
 * The spreadsheet writers' fast paths give exactly what the plain code they
 * stand for gives: for every UTF-16 code unit and for arbitrary text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cellOf, type SheetColumn } from '../../src/sheets/columns.js';
import { BOM, csvCell, csvChunks, csvField, guardText, isoTimestamps } from '../../src/sheets/csv.js';
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
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom('_', 'x', '0', 'A', '&', '\r', '\uD800', '\uDC00', 'é', ' ') }),
        ),
        (t) => xmlText(t) === escapeXmlText(t),
      ),
      { numRuns: 2000 },
    );
  });

  it('isoTimestamps writes what toISOString writes, for every time value a date-time cell holds', () => {
    const iso = isoTimestamps();
    const DAY = 86_400_000;
    // The ends of the Date range, of the epoch, of the four-digit years, and of a day, with fractions of a millisecond.
    const edges = [
      0,
      -0,
      1,
      -1,
      0.5,
      -0.5,
      -1.5,
      999.9,
      DAY - 1,
      DAY,
      -DAY,
      -DAY + 1,
      8.64e15,
      -8.64e15,
      8.64e15 - 0.25,
      -8.64e15 + 0.25,
    ];
    const years = [-62_167_219_200_000, 253_402_300_800_000, -62_198_755_200_000];
    // Each side of midnight on the first and last days of the range, where a day's number is largest.
    const ends = Array.from({ length: 2000 }, (_, i) => (1e8 - i) * DAY).flatMap((m) =>
      [m - 1, m, -m, -m + 1, -m - 1].filter((x) => Math.abs(x) <= 8.64e15),
    );
    const probes = [...edges, ...years.flatMap((y) => [y - 1, y, y + 1]), ...ends];
    expect(probes.filter((ms) => iso(ms) !== new Date(ms).toISOString())).toEqual([]);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -8.64e15, max: 8.64e15 }),
          fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
          fc.integer({ min: 1.6e12, max: 1.9e12 }),
        ),
        (ms) => iso(ms) === new Date(ms).toISOString(),
      ),
      { numRuns: 20_000 },
    );
    // More days than one formatter keeps: the cache starts over and stays right.
    const many = Array.from({ length: 10_000 }, (_, i) => i * DAY * 3 + ((i * 7919) % DAY));
    expect(many.filter((ms) => iso(ms) !== new Date(ms).toISOString())).toEqual([]);
    expect(many.filter((ms) => iso(ms) !== new Date(ms).toISOString())).toEqual([]);
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
      m: fc.oneof(
        fc.constant(null),
        fc.array(fc.constantFrom('k=1', 'k=-2.5', 'k=x', 'j=3', 'k=', 'k=1e400'), { maxLength: 3 }),
      ),
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
