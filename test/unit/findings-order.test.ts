/**
 * The order of the findings (CONTRACT section 17: by severity, rule and key):
 * severity, rule, the subject's export, its key part by part with a shorter
 * key first when it is a prefix, then the related rows the same way (a
 * shorter list first when it is a prefix), then the detail, for keys and
 * details holding characters JSON escapes (which order differently as JSON
 * text), checked against a reference written field by field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineRule, severityRank, type FindingDraft, type Severity } from '../../src/findings/define.js';
import { evaluateFindings } from '../../src/findings/evaluate.js';
import { serializeFindings } from '../helpers/findings-json.js';

const part = fc.constantFrom(
  '',
  'a',
  'ab',
  'a\u0000',
  'a\u0001',
  'a\u0002',
  'a\u0003',
  '\u0000',
  '\u0001b',
  '\u0002',
  'b',
  'é',
  '😀',
  'Z',
);
const ref = fc.record({
  export: fc.constantFrom('projects', 'project_memberships', 'teams'),
  key: fc.array(part, { maxLength: 3 }),
});
const draft: fc.Arbitrary<FindingDraft> = fc.record({
  subject: ref,
  related: fc.array(ref, { maxLength: 2 }),
  detail: fc.constantFrom('', 'd', 'd"', 'd!', 'd\\', 'dZ', 'e', '\u0000'),
});

interface Line {
  rule: string;
  severity: Severity;
  subject: { export: string; key: string[] };
  related: Array<{ export: string; key: string[] }>;
  detail: string;
}

const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** The order field by field: what the one string must give. */
function reference(a: { f: Line; line: string }, b: { f: Line; line: string }): number {
  const byRank = severityRank(b.f.severity) - severityRank(a.f.severity);
  if (byRank !== 0) return byRank;
  const byRule = text(a.f.rule, b.f.rule) || text(a.f.subject.export, b.f.subject.export);
  if (byRule !== 0) return byRule;
  const bySubject = keys(a.f.subject.key, b.f.subject.key);
  if (bySubject !== 0) return bySubject;
  for (let i = 0; i < Math.min(a.f.related.length, b.f.related.length); i++) {
    const c = text(a.f.related[i]!.export, b.f.related[i]!.export) || keys(a.f.related[i]!.key, b.f.related[i]!.key);
    if (c !== 0) return c;
  }
  return a.f.related.length - b.f.related.length || text(a.f.detail, b.f.detail);
}

function keys(ka: readonly string[], kb: readonly string[]): number {
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const c = text(ka[i]!, kb[i]!);
    if (c !== 0) return c;
  }
  return ka.length - kb.length;
}

describe("the findings' order", () => {
  it('is severity, rule, subject key part by part, then the related rows and the detail field by field, whatever they hold', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(draft, { maxLength: 12 }),
        fc.array(draft, { maxLength: 12 }),
        fc.array(draft, { maxLength: 12 }),
        async (x, y, z) => {
          const rules = [
            defineRule({
              id: 'b-rule',
              severity: 'high',
              description: 'd',
              meaning: 'm',
              spec: [],
              reads: [{ export: 'teams', columns: ['id'] }],
              check: () => x,
            }),
            defineRule({
              id: 'a-rule',
              severity: 'medium',
              description: 'd',
              meaning: 'm',
              spec: [],
              reads: [{ export: 'teams', columns: ['id'] }],
              check: () => y,
            }),
            defineRule({
              id: 'a',
              severity: 'high',
              description: 'd',
              meaning: 'm',
              spec: [],
              reads: [{ export: 'teams', columns: ['id'] }],
              check: () => z,
            }),
          ];
          const manifest = {
            time: '2026-11-21T02:00:00.000Z',
            exports: [{ export: 'teams', available: true }],
            nullFields: [],
          };
          const report = await evaluateFindings(manifest, async () => [], { rules });
          const lines = JSON.parse(serializeFindings(report)).findings as Line[];
          const expected = lines
            .map((f) => ({ f, line: JSON.stringify(f) }))
            .sort(reference)
            .map((d) => d.line);
          expect(lines.map((f) => JSON.stringify(f))).toEqual(expected);
          expect(lines).toHaveLength(x.length + y.length + z.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});
