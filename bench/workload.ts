/**
 * The benchmark's workload and targets (the issue "Performance: a benchmark of
 * a large site, and the targets it must show"). Numbers here are the
 * benchmark's definition: change them only together with that issue.
 */
import { LARGE_SITE, siteRealms, type DatasetSizes } from '../test/fake/dataset.js';
import type { RealmSpec } from '../test/fake/types.js';

export interface Site {
  readonly name: string;
  readonly sizes: DatasetSizes;
  readonly realms: readonly RealmSpec[];
}

/**
 * The large site: 50,000 users; 2,000 teams of 25 members; 100,000 drives;
 * 5,000 projects with 60,000 memberships; 10 realms each with 1,000 images,
 * 5,000 VM configs and 2,000 active VMs; 2,000 bricks; 500 external servers;
 * 20,000 user certifications; release 3.14.1.
 */
export const LARGE: Readonly<DatasetSizes> = LARGE_SITE;

/**
 * The sites' text and shapes are a real site's (test/fake/variety.ts): names
 * and descriptions in many scripts, characters JSON escapes, optional fields
 * absent at random, nested settings. Without it, the generator's plain
 * records made the build look up to 2× cheaper per MB than on real data.
 */
export const VARIETY = true;

export const REALM_COUNT = 10;
export const RELEASE = '3.14.1' as const;
/** Added by the fake backend to every response. */
export const LATENCY_MS = 50;

/** Ten realms, both drivers (LARGE_SITE_REALMS of the fake dataset). */
export function realms(count = REALM_COUNT): RealmSpec[] {
  return siteRealms(count);
}

/** Every count multiplied by `factor` (members per team, and the realm count, stay). */
export function scaled(factor: number, base: Readonly<DatasetSizes> = LARGE): DatasetSizes {
  const out = { ...base };
  for (const k of Object.keys(out) as Array<keyof DatasetSizes>) {
    if (k === 'membersPerTeam') continue;
    out[k] = Math.max(1, Math.round(base[k] * factor));
  }
  return out;
}

export function site(name: string, factor: number, realmCount = REALM_COUNT): Site {
  return { name, sizes: scaled(factor), realms: realms(realmCount) };
}

/** Share of records changed between the two snapshots the diff figure compares. */
export const DIFF_CHANGED_SHARE = 0.01;

export const TARGETS = {
  /** Live snapshot wall time ≤ this × the transport floor (every route received and dropped at the default concurrency). */
  liveVsFloor: 2.5,
  /** Live collect wall time ≤ this × the transport floor. */
  collectVsFloor: 1.3,
  /** Replay ≤ this × (read + JSON.parse + JSON.stringify + write of every raw file). */
  replayVsBaseline: 1.2,
  /** Peak RSS ≤ this × the raw collection's size on disk, at 1× and 2×. */
  rssVsCollection: 2.5,
  /** Time that `--format csv,xlsx` adds to a replay ≤ this × the replay (the JSON exports' build) itself. */
  spreadsheetsVsJson: 1.0,
  /** `svc-snapshot --help` ≤ this × `node -e 0`. */
  helpVsNode: 3,
  /** diff of two snapshots ≤ this × JSON.parse of both snapshots' files. */
  diffVsParse: 2,
  /** Time that `--findings` adds to a replay ≤ this × the replay itself (issue 36). */
  findingsVsReplay: 0.2,
  /** Time that the states against the night before and 1,000 waivers add to `--findings` ≤ this × a replay (issue 45). */
  lifecycleVsReplay: 0.1,
  /** Time that the CSV of all findings adds to `findings <dir>` (over its --json) ≤ this × a replay (issue 45). */
  findingsCsvVsReplay: 0.1,
  /** Time that `--notify` to local receivers adds to `--replay --findings` ≤ this × a replay (issue 46). */
  notifyVsReplay: 0.05,
  /** Time that `--include vms` (50,000 VM configs, 20,000 running VMs on the large site) adds to a replay ≤ this × the replay itself (issue 35). */
  includeVmsVsReplay: 0.35,
  /** Time that `--format html` (the report, beside the night before, whose changes it shows) adds to a replay ≤ this × the replay itself (issue 37). */
  reportVsReplay: 0.3,
  /** The report page ≤ this many MB (10^6 bytes), whatever the site's size (issue 37): a row's ratio is its size ÷ this, ≤ 1. */
  reportPageMB: 5,
  /** Time that `--format html` with a history database of REPORT_HISTORY_NIGHTS nights adds to a replay ≤ this × the replay itself (issue 37). */
  reportWithHistoryVsReplay: 0.5,
} as const;

/** Nights in the history database the report's figure with a history reads (issue 37). */
export const REPORT_HISTORY_NIGHTS = 60;

/**
 * `--huge`: drives of the large site's kind, as many as make a `GET
 * /api/drives` body of about 650 MB (over V8's longest string, about 512 MB);
 * every other list a tenth of the large site's.
 */
export const HUGE_DRIVES = 1_470_000;
export const HUGE_OTHERS_FACTOR = 0.1;
/** `--huge`: peak RSS of a replay ≤ this × the drives body. */
export const HUGE_RSS_VS_BODY = 2;
/** `--huge`: the exports are compared with the whole-body parse on the first this many bytes of the drives body (the whole body is too long for it). */
export const HUGE_IDENTITY_BYTES = 200 * 1024 * 1024;

/** At least this many runs per figure in a full run (medians). */
export const MIN_RUNS = 5;
