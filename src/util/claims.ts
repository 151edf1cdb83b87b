/**
 * Work shared out between threads without a message: a word per item in
 * shared memory (an Int32Array over a SharedArrayBuffer), claimed by
 * compare-and-swap, so that a worker takes its next item itself instead of
 * waiting for the main thread, busy with its own item, to hand it one.
 */
export const FREE = 0;
export const TAKEN_BY_WORKER = 1;
export const TAKEN_BY_MAIN = 2;
export type Claimant = typeof TAKEN_BY_WORKER | typeof TAKEN_BY_MAIN;

/** Takes item `i` (its word at `at`) for `who`: false when somebody has it. */
export function claim(state: Int32Array, at: number, who: Claimant): boolean {
  return Atomics.compareExchange(state, at, FREE, who) === FREE;
}

/** Whether nobody has taken the item whose word is at `at`. */
export function isFree(state: Int32Array, at: number): boolean {
  return Atomics.load(state, at) === FREE;
}

/** Takes for `who` the largest item nobody has (sizes by item, the first of equals; words from `state[0]`); undefined once none is free. */
export function claimLargestFree(state: Int32Array, sizes: readonly number[], who: Claimant): number | undefined {
  for (;;) {
    let best: number | undefined;
    for (let i = 0; i < sizes.length; i++) if (isFree(state, i) && (best === undefined || sizes[i]! > sizes[best]!)) best = i;
    if (best === undefined || claim(state, best, who)) return best;
  }
}

/**
 * Takes for a worker the largest item of `offered` (by id; undefined: not
 * offered yet) that nobody has (words from `state[base]`, by id) such that
 * the KB in flight, counted in `state[flyingAt]`, stay within `limitKb` (no
 * limit when undefined; with `oneAtLeast`, any item fits while nothing is in
 * flight), and counts its KB in; the first of equals. Undefined when none
 * may be taken now. The caller subtracts the KB once the item is done. The
 * build's parts (src/exports/part-offer.ts) and the spreadsheets' exports
 * (src/sheets/sheet-worker.ts) are claimed through it.
 */
export function claimLargestWithin(
  state: Int32Array,
  flyingAt: number,
  base: number,
  offered: ReadonlyArray<{ readonly kb: number } | undefined>,
  limitKb: number | undefined,
  oneAtLeast = false,
): number | undefined {
  for (;;) {
    const flying = Atomics.load(state, flyingAt);
    let best: number | undefined;
    let bestKb = 0;
    for (let id = 0; id < offered.length; id++) {
      const o = offered[id];
      if (o === undefined || !isFree(state, base + id)) continue;
      if (limitKb !== undefined && !(oneAtLeast && flying === 0) && flying + o.kb > limitKb) continue;
      if (best === undefined || o.kb > bestKb) {
        best = id;
        bestKb = o.kb;
      }
    }
    if (best === undefined) return undefined;
    // The count's word first, then the item's: a race on either starts over.
    if (Atomics.compareExchange(state, flyingAt, flying, flying + bestKb) !== flying) continue;
    if (claim(state, base + best, TAKEN_BY_WORKER)) return best;
    Atomics.sub(state, flyingAt, bestKb);
  }
}
