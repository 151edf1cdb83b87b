import { describe, expect, it } from 'vitest';
import type { BuildSummary, BuiltExport } from '../../src/exports/build.js';
import type { ExportRecord } from '../../src/exports/types.js';
import { keepFindingInputs } from '../../src/findings/tap.js';
import { defineRule } from '../../src/findings/define.js';

const rule = defineRule({
  id: 'probe',
  severity: 'low',
  description: 'reads two columns of users',
  meaning: 'test',
  spec: [],
  reads: [{ export: 'users', columns: ['id', 'expires'] }],
  check: () => [],
});

function exportOf(index: number, name: string, records: ExportRecord[]): BuiltExport {
  return {
    index,
    export: name,
    available: true,
    count: records.length,
    nullFields: [],
    *batches(size: number) {
      for (let i = 0; i < records.length; i += size) yield records.slice(i, i + size);
    },
  };
}

function* build(exports: BuiltExport[], state: { ended: boolean }): Generator<BuiltExport, BuildSummary, void> {
  try {
    for (const e of exports) yield e;
  } finally {
    state.ended = true;
  }
  return { validation: { issues: 0, samples: [] }, drift: [], nullFields: [], bodyFailures: [] } as unknown as BuildSummary;
}

describe('the findings inputs kept as the build yields them', () => {
  it('keeps the declared columns of the declared exports as the written file gives them back', () => {
    const users: ExportRecord[] = [
      { id: 'a', expires: Number.POSITIVE_INFINITY, name: 'x' },
      { id: 'b', expires: -0 },
      { id: 'c', expires: [1, Number.NaN, undefined] as unknown as number },
      { id: 'd', expires: undefined },
    ];
    const teams: ExportRecord[] = [{ id: 't' }];
    const state = { ended: false };
    const inputs = keepFindingInputs(build([exportOf(0, 'users', users), exportOf(1, 'teams', teams)], state), [rule]);
    const passed: ExportRecord[][] = [];
    for (let s = inputs.built.next(); !s.done; s = inputs.built.next()) for (const b of s.value.batches(3)) passed.push(b);
    // Every batch passes through as the build made it.
    expect(passed.flat()).toEqual([...users, ...teams]);
    return inputs.records('users').then((kept) => {
      const written = (JSON.parse(JSON.stringify(users)) as ExportRecord[]).map((r) => ({ id: r.id ?? null, expires: r.expires ?? null }));
      expect(kept).toStrictEqual(written);
      expect(Object.is(kept[1]!.expires, 0)).toBe(true);
      expect(kept[0]).not.toHaveProperty('name');
    });
  });

  it('an export no rule reads is not kept; a write that stops early ends the build', async () => {
    const state = { ended: false };
    const inputs = keepFindingInputs(build([exportOf(0, 'teams', [{ id: 't' }]), exportOf(1, 'users', [{ id: 'u' }])], state), [rule]);
    const first = inputs.built.next();
    expect(first.done).toBe(false);
    await expect(inputs.records('teams')).rejects.toThrow(/no teams export/);
    inputs.built.return(undefined as never);
    expect(state.ended).toBe(true);
  });
});
