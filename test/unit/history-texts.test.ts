import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeExport } from '../../src/exports/serialize.js';
import type { ExportRecord } from '../../src/exports/types.js';
import { fileProblem, recordTextsOf, sameAsWritten } from '../../src/history/texts.js';
import { recordRanges } from '../../src/snapshot/records.js';
import { swapWithNext } from '../helpers/history-fixtures.js';

/** Records as exports hold them: at least one column; values of every JSON kind, nested, with the characters JSON escapes. */
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('\n  }', '},\n  {', '\\n  }', '"\n]\n'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 3 }),
  ),
})).value;
const record = fc.dictionary(fc.string({ unit: 'binary', minLength: 0, maxLength: 8 }), value, {
  minKeys: 1,
  maxKeys: 5,
}) as fc.Arbitrary<ExportRecord>;
const records = fc.array(record, { maxLength: 230 });

/** The record texts of a file, as the one splitter finds them (src/snapshot/records.ts), or undefined when it is not framed as the writer frames it. */
function splitRecordTexts(file: string): string[] | undefined {
  const bytes = Buffer.from(file);
  const ranges = recordRanges(bytes);
  return ranges && Array.from(ranges.starts, (start, i) => bytes.toString('utf8', start, ranges.ends[i]));
}

describe('record texts (history schema 2)', () => {
  it('splits an export file into each record as the file holds it, and the writer makes the same texts a batch at a time', () => {
    fc.assert(
      fc.property(records, (rs) => {
        const file = serializeExport({ records: rs });
        const texts = splitRecordTexts(file)!;
        expect(texts).toHaveLength(rs.length);
        // Each text is its record, as JSON and as the file's bytes.
        expect(texts.map((t) => JSON.parse(t) as unknown)).toEqual(JSON.parse(file));
        expect(texts.length === 0 ? '[]\n' : `[\n  ${texts.join(',\n  ')}\n]\n`).toBe(file);
        expect(recordTextsOf(rs)).toEqual(texts);
        expect(sameAsWritten(rs, texts)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a file framed otherwise than the writer frames it', () => {
    const file = serializeExport({
      records: [
        { id: 'a', n: 1 },
        { id: 'b', n: [2] },
      ],
    });
    expect(splitRecordTexts(file)).toHaveLength(2);
    for (const bad of [
      file.slice(0, -1),
      `${file}\n`,
      ` ${file}`,
      file.replace('},\n  {', '}, {'),
      file.replace('},\n  {', '},\n\n  {'),
      JSON.stringify(JSON.parse(file)),
      '[]',
      '[\n]\n',
      '[\n  {}\n]\n',
      '[\n  {\n    "id": "a"\n  }\n]\n[\n  {\n    "id": "b"\n  }\n]\n',
    ]) {
      // Not split at all, or not into the two records the writer would make (a boundary moved joins two records into one text).
      const texts = splitRecordTexts(bad);
      expect(texts === undefined || texts.length !== 2, JSON.stringify(bad)).toBe(true);
    }
  });

  it('finds a text that parses to its record but is not what the writer makes of it', () => {
    const rs: ExportRecord[] = Array.from({ length: 250 }, (_, i) => ({ id: `u${i}`, tags: ['a', 'b'], n: i / 4 }));
    const texts = recordTextsOf(rs);
    expect(sameAsWritten(rs, texts)).toBe(true);
    const only = (list: readonly number[], ts: readonly string[]) =>
      sameAsWritten(
        list.map((i) => rs[i]!),
        list.map((i) => ts[i]!),
      );
    for (const change of [
      (t: string) => t.replace('"n": ', '"n":  '),
      (t: string) => t.replace('\n    "tags"', '\n     "tags"'),
      (t: string) => t.replace('"u', '"\\u0075'),
    ]) {
      const changed = [...texts];
      changed[217] = change(changed[217]!);
      expect(JSON.parse(changed[217]!)).toEqual(rs[217]);
      expect(sameAsWritten(rs, changed)).toBe(false);
      expect(only([217], changed)).toBe(false);
      // Only the records given are checked: the load gives those whose text is not in the database already.
      expect(only([3, 216, 218], changed)).toBe(true);
    }
  });

  it('checks a whole file from its texts a batch at a time: order across batches, layout only when asked', () => {
    const rs: ExportRecord[] = Array.from({ length: 250 }, (_, i) => ({
      id: `u${String(i).padStart(4, '0')}`,
      name: `Zoë ${i}`,
      n: i,
    }));
    const file = serializeExport({ records: rs });
    const check = (text: string, layout: boolean) => {
      const texts = splitRecordTexts(text);
      return texts ? fileProblem(texts, ['id'], layout) : { kind: 'layout' };
    };
    expect(check(file, true)).toBeUndefined();
    expect(check('[]\n', true)).toBeUndefined();
    // Records 100 and 101 (from 1) are the last of one batch and the first of the next.
    expect(check(swapWithNext(file, 'u0099'), false)).toEqual({ kind: 'order', record: 100 });
    expect(check(swapWithNext(file, 'u0007'), true)).toEqual({ kind: 'order', record: 8 });
    const spaced = file.replace('"n": 217', '"n":  217');
    expect(check(spaced, true)).toEqual({ kind: 'layout' });
    expect(check(spaced, false)).toBeUndefined();
    expect(check(file.replace('"n": 217', '"n": 217x'), false)).toEqual({ kind: 'layout' });
    expect(check(file.slice(0, -1), false)).toEqual({ kind: 'layout' });
  });
});
