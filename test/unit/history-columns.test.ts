import { describe, expect, it } from 'vitest';
import { readCollection } from '../../src/collect/replay.js';
import { buildAll } from '../../src/exports/build.js';
import { keyParameter, keyText, storedKeyText, type ColumnType } from '../../src/history/columns.js';
import { EXPORT_TABLES, exportTable } from '../../src/history/schema.js';
import { RECORDED_NIGHTS } from '../helpers/history-v2.js';

/** Whether a value an export holds fits the column type the history derived for it. */
function fits(type: ColumnType, v: unknown): boolean {
  if (type === 'integer') return Number.isSafeInteger(v);
  if (type === 'real') return typeof v === 'number';
  if (type === 'boolean') return typeof v === 'boolean';
  return typeof v === 'string' || Array.isArray(v);
}

describe('history column types', () => {
  it('come from the catalog: timestamps, numbers, booleans, counts, maps and arrays', () => {
    const typeOf = (exp: string, col: string) => {
      const c = exportTable(exp)!.typed.find((x) => x.name === col)!;
      return c.timestamp ? 'timestamp' : c.type;
    };
    expect(
      ['created', 'capacity', 'noBackup', 'readers', 'name', 'sizeOnDisk'].map((c) => typeOf('drives', c)),
    ).toEqual(['timestamp', 'real', 'boolean', 'text', 'text', 'real']);
    expect(typeOf('vm_hardware_setups', 'vmConfigCount')).toBe('integer');
    expect(typeOf('teams', 'quotas')).toBe('text');
    expect(typeOf('projects', 'settings')).toBe('text');
    expect(typeOf('team_memberships', 'perm')).toBe('real');
  });

  it('hold every value the exports built from the recordings hold, in every column of every export, the --include vms ones too', async () => {
    let checked = 0;
    const seen = new Set<ColumnType>();
    for (const dir of RECORDED_NIGHTS) {
      const built = buildAll(await readCollection(dir), ['vms']);
      for (const e of built.exports) {
        const t = exportTable(e.export)!;
        for (const r of e.records) {
          for (const c of t.typed) {
            const v = r[c.name];
            if (v === null || v === undefined) continue;
            expect(fits(c.type, v), `${e.export}.${c.name} = ${JSON.stringify(v)} in a ${c.type} column`).toBe(true);
            seen.add(c.type);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
    expect([...seen].sort()).toEqual(['boolean', 'integer', 'real', 'text']);
    expect(EXPORT_TABLES.every((t) => t.typed.length === t.def.columns.length)).toBe(true);
  });

  it('match keys as text across engines, and read a key given on the command line as its type', () => {
    expect([storedKeyText('integer', 5), storedKeyText('integer', '5'), keyText('integer', 5)]).toEqual([
      '5',
      '5',
      '5',
    ]);
    expect([
      storedKeyText('boolean', 1),
      storedKeyText('boolean', true),
      storedKeyText('boolean', 0),
      keyText('boolean', false),
    ]).toEqual(['true', 'true', 'false', 'false']);
    expect([keyText('text', 'a'), keyText('text', ['a']), keyText('integer', 1.5), keyText('text', null)]).toEqual([
      'a',
      '["a"]',
      null,
      null,
    ]);
    expect([
      keyParameter('integer', '42'),
      keyParameter('integer', 'x'),
      keyParameter('integer', '1.5'),
      keyParameter('boolean', 'true'),
      keyParameter('real', '2.5'),
      keyParameter('text', '42'),
    ]).toEqual([42, undefined, undefined, 1, 2.5, '42']);
  });
});
