/**
 * The fast paths' switches as the differential tests pass them to the code
 * (src/fast-paths.ts). Each switch the code reads is noted, with its value,
 * in the file SVC_FENCE_TRACE names (when it is set): test/unit/fence.test.ts
 * runs each differential test file with it and requires that the code read
 * every switch the file is named for, on and off.
 */
import { appendFileSync } from 'node:fs';
import { FAST_PATHS, type FastPaths } from '../../src/fast-paths.js';

export type FastPathName = keyof FastPaths;

/** The code's own list of fast paths. */
export const FAST_PATH_NAMES = Object.keys(FAST_PATHS) as FastPathName[];

const noted = new Set<string>();

function note(name: FastPathName, on: boolean): void {
  const trace = process.env.SVC_FENCE_TRACE;
  if (trace === undefined || trace === '') return;
  const line = `${name}=${on ? 'on' : 'off'}`;
  if (noted.has(`${trace}\0${line}`)) return;
  noted.add(`${trace}\0${line}`);
  appendFileSync(trace, `${line}\n`);
}

/** Every fast path on but those named in `off`; each switch notes its reads (never spread it: that reads every switch). */
export function fastPaths(off: Iterable<FastPathName> = []): FastPaths {
  const offSet = new Set(off);
  const switches = {} as Record<FastPathName, boolean>;
  for (const name of FAST_PATH_NAMES) {
    const on = !offSet.has(name);
    Object.defineProperty(switches, name, {
      enumerable: true,
      get: () => {
        note(name, on);
        return on;
      },
    });
  }
  return switches;
}
