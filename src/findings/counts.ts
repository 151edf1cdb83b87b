/**
 * The one set of counts a night has, read by every output that counts
 * findings (the summary, `_findings.json`, `findings --json`, the report,
 * the digests, the metrics). Each finding of the night is `new` or `open`
 * (without a night before, every one is `new`), and waived or not,
 * independently; `resolved` are the night before's findings that are gone;
 * `active` = new + open − waived. Findings carried from the night before (of
 * rules not evaluated tonight) are counted apart, as `carried`.
 */
export interface NightCounts {
  readonly new: number;
  readonly open: number;
  readonly resolved: number;
  readonly waived: number;
  readonly active: number;
}

/** What the counts read of a night's findings: each finding's state and waiver, and the resolved list. */
export interface CountedNight {
  readonly findings: ReadonlyArray<{ readonly state?: 'new' | 'open'; readonly waived?: unknown }>;
  readonly resolved?: readonly unknown[];
}

export function nightCounts(night: CountedNight): NightCounts {
  let open = 0;
  let waived = 0;
  for (const f of night.findings) {
    if (f.state === 'open') open++;
    if (f.waived !== undefined) waived++;
  }
  const all = night.findings.length;
  return { new: all - open, open, resolved: night.resolved?.length ?? 0, waived, active: all - waived };
}

/** The counts as every text form says them: `11 new, 19 open, 4 resolved, 2 waived, 28 active`. */
export function countsText(c: NightCounts): string {
  return `${c.new} new, ${c.open} open, ${c.resolved} resolved, ${c.waived} waived, ${c.active} active`;
}
