/**
 * Two nights of an export as files, for the diff's tests of the newer file
 * read only where it differs (test/unit/diff-bytes.test.ts).
 */
import fc from 'fast-check';
import { EXPORTS } from '../../src/exports/catalog.js';
import { sortRecords } from '../../src/exports/order.js';
import { serializeExport } from '../../src/exports/serialize.js';
import type { ExportRecord } from '../../src/exports/types.js';

/** Two nights of team_memberships as files: most records the same bytes, and every way the newer can be out of order or out of layout. */
export const twoNights = (() => {
  const d = EXPORTS.find((e) => e.name === 'team_memberships')!;
  const member = (t: number, m: number, extra: unknown = null): ExportRecord => ({
    teamID: `team|${String(t).padStart(3, '0')}`,
    memberID: `user|${String(m).padStart(3, '0')}`,
    canManage: extra,
  });
  const older = fc
    .uniqueArray(fc.tuple(fc.nat(30), fc.nat(30)), {
      selector: ([t, m]) => `${t}/${m}`,
      minLength: 1,
      maxLength: 80,
      size: 'max',
    })
    .map((pairs) => {
      const list = pairs.map(([t, m]) => member(t, m));
      sortRecords(
        list,
        d.key,
        d.columns.map((c) => c.name),
      );
      return list;
    });
  /** What is done to the newer file's records, then to its text. */
  const edit = fc.record({
    // Long runs of the same records as well as short ones.
    ops: fc.oneof(
      fc.array(fc.constantFrom('same', 'same', 'same', 'same', 'same', 'change', 'drop', 'add'), {
        minLength: 81,
        maxLength: 81,
      }),
      fc.array(
        fc.oneof(
          { weight: 30, arbitrary: fc.constant('same') },
          { weight: 1, arbitrary: fc.constantFrom('change', 'drop', 'add') },
        ),
        { minLength: 81, maxLength: 81 },
      ),
    ),
    perturb: fc.constantFrom(
      'none',
      'none',
      'none',
      'swap',
      'twice',
      'repeated name',
      'repeated name in both',
      'non-ascii key',
      'indent',
      'one line',
      'brace on a field line',
      'count-1',
      'count+1',
    ),
    at: fc.nat(60),
  });
  return fc.tuple(older, edit).map(([olderRecords, { ops, perturb, at }]) => {
    const newer: ExportRecord[] = [];
    olderRecords.forEach((o, i) => {
      const op = ops[i]!;
      if (op === 'same') newer.push(o);
      else if (op === 'change') newer.push({ ...o, canManage: true });
      else if (op === 'add') newer.push(o, member(Number(String(o.teamID).slice(5)), 31 + i));
    });
    sortRecords(
      newer,
      d.key,
      d.columns.map((c) => c.name),
    );
    const k = newer.length > 0 ? at % newer.length : 0;
    if (perturb === 'swap' && newer.length > 1)
      [newer[k], newer[(k + 1) % newer.length]] = [newer[(k + 1) % newer.length]!, newer[k]!];
    if (perturb === 'twice' && newer.length > 0) newer.splice(k, 0, newer[k]!);
    if (perturb === 'non-ascii key' && newer.length > 0) newer[k] = { ...newer[k]!, memberID: 'usér|x' };
    let olderText = serializeExport({ records: olderRecords });
    let newerText = serializeExport({ records: newer });
    let newerCount = newer.length;
    // A key's line written twice in one record (JSON.parse keeps the last): in the newer file only, or in both at the same record.
    const repeatName = (text: string, n: number) => {
      let seen = -1;
      return text.replace(/\n {4}"memberID": ("[^"]*")/g, (line: string, value: string) =>
        ++seen === n ? `${line},\n    "memberID": "user|zz${value.length}"` : line,
      );
    };
    if (perturb === 'repeated name') newerText = repeatName(newerText, k);
    if (perturb === 'repeated name in both') {
      const i = olderRecords.findIndex((r) => r === newer[k]);
      if (i >= 0) {
        olderText = repeatName(olderText, i);
        newerText = repeatName(newerText, k);
      }
    }
    // Out of the serializer's layout, still JSON: a record's start indented by 3, a record on one line, a record's closing brace on its last field's line.
    if (perturb === 'indent' && newer.length > 1) {
      let seen = -1;
      newerText = newerText.replace(/\n {2}\},\n {2}\{/g, (between: string) =>
        ++seen === k % (newer.length - 1) ? '\n  },\n   {' : between,
      );
    }
    if (perturb === 'one line' && newer.length > 1) {
      const line = `{"teamID":${JSON.stringify(newer[k]!.teamID)},"memberID":${JSON.stringify(newer[k]!.memberID)},"canManage":null}`;
      newerText = serializeExport({ records: newer.map((r, i) => (i === k ? { one: 'LINE' } : r)) }).replace(
        /\{\n {4}"one": "LINE"\n {2}\}/,
        line,
      );
    }
    if (perturb === 'brace on a field line' && newer.length > 1) {
      let seen = -1;
      newerText = newerText.replace(/\n {2}\},\n {2}\{/g, (between: string) =>
        ++seen === k % (newer.length - 1) ? '},\n  {' : between,
      );
    }
    if (perturb === 'count-1') newerCount--;
    if (perturb === 'count+1') newerCount++;
    return { d, olderText, newerText, olderCount: olderRecords.length, newerCount };
  });
})();
