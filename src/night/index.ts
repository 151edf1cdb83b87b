/**
 * The nights around a snapshot, found once per command: the night before
 * (beside it, whatever the directories are called), the newer night that
 * makes it a re-run, if any. docs/night.md states the rules.
 */
import type { HistorySource } from '../history/previous-findings.js';
import { previousSnapshotBeside, type PreviousBeside, type Rerun } from '../snapshot/beside.js';
import { newerNightInHistory } from '../history/previous-findings.js';
import { formatISO } from 'date-fns/formatISO';
import { parseISO } from 'date-fns/parseISO';

export interface Nights {
  readonly beside: PreviousBeside;
  readonly rerun?: Rerun;
}

/** The nights around the snapshot to be published at `outDir` (its manifest given: it may be in staging still). */
export async function nightsAround(
  outDir: string,
  own: { readonly date: string; readonly time: string; readonly baseUrl: string },
  history: HistorySource | undefined,
  warn: (message: string) => void,
): Promise<Nights> {
  const beside = await previousSnapshotBeside(outDir, own);
  const rerun = await rerunOf(beside, own, history, warn);
  return { beside, ...(rerun ? { rerun } : {}) };
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
