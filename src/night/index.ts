/**
 * The nights around a snapshot, found once per command: the night before
 * (beside it, whatever the directories are called), the newer night that
 * makes it a re-run, if any. docs/night.md states the rules.
 */
import type { HistorySource } from '../history/previous-findings.js';
import { previousSnapshotBeside, type PreviousBeside } from './before.js';
import { rerunOf, type Rerun } from './rerun.js';

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
