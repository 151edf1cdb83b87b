/**
 * The spreadsheet writers' fast paths give exactly what the plain code they
 * stand for gives: for every UTF-16 code unit and for arbitrary text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeXmlText, xmlText } from '../../src/sheets/xlsx.js';

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
});
