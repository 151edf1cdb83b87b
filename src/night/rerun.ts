import { formatISO } from 'date-fns/formatISO';
import { parseISO } from 'date-fns/parseISO';
import { newerNightInHistory, type HistorySource } from '../history/previous-findings.js';
import type { PreviousBeside } from './before.js';

/**
 * A re-run: a night older than the newest night of its site (running night 2
 * again after night 3). It is published as usual and told against its own
 * night before, says so in the summary, the report and the digest, and sends
 * nothing to Alertmanager: the newest night already said what is firing.
 */
export interface Rerun {
  /** The re-run night's date (`YYYY-MM-DD`). */
  readonly of: string;
  /** The newest night's date. */
  readonly newer: string;
}

/** What every text form says of a re-run, right after its verdict or heading. */
export function rerunText(r: Rerun): string {
  return `re-run of ${r.of}: ${r.newer} is newer`;
}

/**
 * Whether a night is a re-run: a snapshot of its site taken later is beside
 * it, or else (with a history database) a later night of the site is in the
 * database. `date` is the night's own date.
 */
export async function rerunOf(
  beside: PreviousBeside,
  night: { readonly date: string; readonly time: string; readonly baseUrl: string },
  history: HistorySource | undefined,
  warn: (message: string) => void,
): Promise<Rerun | undefined> {
  if (beside.newer) return { of: night.date, newer: beside.newer.date };
  if (!history) return undefined;
  const newer = await newerNightInHistory(history, night.baseUrl, night.time, warn);
  return newer === undefined
    ? undefined
    : { of: night.date, newer: formatISO(parseISO(newer), { representation: 'date' }) };
}
