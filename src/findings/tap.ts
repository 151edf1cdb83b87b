/**
 * The findings' inputs kept as the build yields them: of each export a rule
 * reads, only the columns the rules read, copied from every batch on its way
 * to the export file. `--findings` and `--format html` then evaluate the
 * rules over the build's records (issue 36: never over raw bodies a second
 * time, and no export file read back and parsed again).
 *
 * A kept value is the value a reader of the written file gets: JSON has no
 * `undefined`, NaN, Infinity or -0, so they are kept as that file's `null`
 * and `0`, and the findings of a snapshot are the same whether evaluated
 * here or over its published directory (`svc-snapshot findings`).
 */
import type { BuildSummary, BuiltExport } from '../exports/build.js';
import type { ExportRecord } from '../exports/types.js';
import { exportsRead, RULES } from './catalog.js';
import type { RuleDef } from './define.js';

/** A value as JSON.parse(JSON.stringify(record)) gives it back. */
function asWritten(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? (Object.is(v, -0) ? 0 : v) : null;
    default:
      return JSON.parse(JSON.stringify(v)) as unknown;
  }
}

function* keep(batches: Iterable<ExportRecord[]>, columns: readonly string[], into: ExportRecord[]): Generator<ExportRecord[]> {
  for (const batch of batches) {
    for (const r of batch) {
      const o: ExportRecord = {};
      for (const c of columns) o[c] = asWritten(r[c]);
      into.push(o);
    }
    yield batch;
  }
}

export interface FindingInputs {
  /** The build, each export passing through unchanged. */
  readonly built: Generator<BuiltExport, BuildSummary, void>;
  /** The kept records of an export the rules read (after the build has yielded it). */
  records(exportName: string): Promise<readonly ExportRecord[]>;
}

/** Wraps the build so that the rules' inputs are kept as its batches are written. */
export function keepFindingInputs(built: Generator<BuiltExport, BuildSummary, void>, rules: readonly RuleDef[] = RULES): FindingInputs {
  const wanted = new Map([...exportsRead(rules)].map(([name, cols]) => [name, [...cols]]));
  const kept = new Map<string, ExportRecord[]>();
  function* tapped(): Generator<BuiltExport, BuildSummary, void> {
    let step: IteratorResult<BuiltExport, BuildSummary> | undefined;
    try {
      for (step = built.next(); !step.done; step = built.next()) {
        const e = step.value;
        const columns = wanted.get(e.export);
        if (!columns) {
          yield e;
          continue;
        }
        const into: ExportRecord[] = [];
        kept.set(e.export, into);
        yield { ...e, batches: (size: number) => keep(e.batches(size), columns, into) };
      }
      return step.value;
    } finally {
      // Ended early (a failed write): the build is ended too.
      if (step?.done !== true) built.return(undefined as never);
    }
  }
  return {
    built: tapped(),
    records(name) {
      const records = kept.get(name);
      if (!records) return Promise.reject(new Error(`the build yielded no ${name} export for the findings`));
      return Promise.resolve(records);
    },
  };
}
