/**
 * FAST PATH: the specialised record maker of the build. recordMaker(names)
 * is equivalent to `plainRecordMaker(names)` below: a record with the given
 * keys in order and the given values, built from a generated object literal
 * (new Function) so that every record of an export has one fixed shape.
 * Column names are checked against a strict identifier pattern at catalog
 * load, and are JSON-quoted here besides. Differential test:
 * test/unit/fast-paths.test.ts. What it earns: bench/RESULTS.md.
 */
import type { ExportRecord } from '../types.js';

export function recordMaker(names: readonly string[]): (values: readonly unknown[]) => ExportRecord {
  const body = `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`;
  return new Function('v', body) as (values: readonly unknown[]) => ExportRecord;
}

/** What recordMaker stands in for. */
export function plainRecordMaker(names: readonly string[]): (values: readonly unknown[]) => ExportRecord {
  return (values) => {
    const out: ExportRecord = {};
    names.forEach((n, i) =>
      Object.defineProperty(out, n, { value: values[i], enumerable: true, writable: true, configurable: true }),
    );
    return out;
  };
}
