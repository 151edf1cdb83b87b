import { format, isMatch, parse } from 'date-fns';
import type { ExportResult } from './types.js';

/** An export file's content: a JSON array, 2-space indented, with a trailing newline (`[]` when empty). */
export function serializeExport(result: Pick<ExportResult, 'records'>): string {
  return `${JSON.stringify(result.records, null, 2)}\n`;
}

/**
 * `<count>-<export> (<M>-<D>-<YYYY>).json` (CONTRACT section 5) for a
 * `YYYY-MM-DD` date. The date is parsed and formatted in the same (local)
 * calendar, so the name does not depend on the process time zone.
 */
export function exportFileName(name: string, count: number, date: string): string {
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`export ${name}: count must be a non-negative integer, got ${count}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !isMatch(date, 'yyyy-MM-dd')) throw new Error(`export ${name}: date must be YYYY-MM-DD, got "${date}"`);
  const day = parse(date, 'yyyy-MM-dd', new Date(2000, 0, 1));
  return `${count}-${name} (${format(day, 'M-d-yyyy')}).json`;
}
