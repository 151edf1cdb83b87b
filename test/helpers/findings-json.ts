import { serializeFindingsChunks, type FindingsReport } from '../../src/findings/evaluate.js';

/** The bytes of `_findings.json` as one string: the serializer's chunks joined, as a file or stdout receives them. */
export function serializeFindings(report: FindingsReport): string {
  return [...serializeFindingsChunks(report)].join('');
}
