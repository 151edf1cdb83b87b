/**
 * The claims of parts offered to every build worker at once
 * (src/exports/part-offer.ts): each part is built once, by whoever claims it
 * first; a worker takes the largest free part that fits the budget, and
 * waits, without the main thread, while none fits. The pool with real
 * workers is tested through the binary (test/e2e/snapshot-pool.test.ts);
 * so are the spreadsheets made on workers, whose exports are claimed the
 * same way (src/util/claims.ts).
 */
import { describe, expect, it } from 'vitest';
import { claimNext, endClaim, OFFER_FLYING, OFFER_GENERATION, OFFER_TASKS } from '../../src/exports/part-offer.js';
import { claim, claimLargestFree, claimLargestWithin, FREE, isFree, TAKEN_BY_MAIN, TAKEN_BY_WORKER } from '../../src/util/claims.js';

function offerOf(kbs: number[], budgetKb: number) {
  const state = new Int32Array(new SharedArrayBuffer(4 * (OFFER_TASKS + kbs.length)));
  return { offer: { budgetKb, tasks: kbs.map((kb) => ({ kb })) }, state };
}

const noWait = () => {
  throw new Error('claimNext waited');
};

describe('parts offered to the workers', () => {
  it('are claimed largest first (the order given), each once, and none is left after the last', () => {
    const { offer, state } = offerOf([50, 30, 10], 1000);
    expect(claimNext(offer, state, noWait)).toBe(0);
    expect(claimNext(offer, state, noWait)).toBe(1);
    expect(claimNext(offer, state, noWait)).toBe(2);
    expect(claimNext(offer, state, noWait)).toBeUndefined();
    expect([...state.subarray(OFFER_TASKS)]).toEqual([TAKEN_BY_WORKER, TAKEN_BY_WORKER, TAKEN_BY_WORKER]);
    expect(state[OFFER_FLYING]).toBe(90);
  });

  it('skip what the main thread took', () => {
    const { offer, state } = offerOf([50, 30, 10], 1000);
    expect(claim(state, OFFER_TASKS, TAKEN_BY_MAIN)).toBe(true);
    expect(claimNext(offer, state, noWait)).toBe(1);
    // The main thread's part is not in the workers' budget.
    expect(state[OFFER_FLYING]).toBe(30);
    expect(claim(state, OFFER_TASKS + 2, TAKEN_BY_MAIN)).toBe(true);
    expect(claimNext(offer, state, noWait)).toBeUndefined();
  });

  it('let one part through whatever its size, then only what fits the budget beside the parts being built', () => {
    const { offer, state } = offerOf([50, 30, 10], 40);
    expect(claimNext(offer, state, noWait)).toBe(0);
    // 50 is being built: 30 and 10 do not fit beside it, so the next claim waits until it ends.
    let waited = 0;
    const next = claimNext(offer, state, (generation) => {
      waited++;
      expect(generation).toBe(state[OFFER_GENERATION]);
      endClaim(state, 50);
    });
    expect(waited).toBe(1);
    expect(next).toBe(1);
    // 30 is being built; 10 fits beside it.
    expect(claimNext(offer, state, noWait)).toBe(2);
    expect(state[OFFER_FLYING]).toBe(40);
    endClaim(state, 30);
    endClaim(state, 10);
    expect(state[OFFER_FLYING]).toBe(0);
    expect(state[OFFER_GENERATION]).toBe(3);
  });

  it('take the largest part that fits when a larger one does not', () => {
    const { offer, state } = offerOf([50, 30, 10], 45);
    expect(claimNext(offer, state, noWait)).toBe(0);
    endClaim(state, 50);
    expect(claimNext(offer, state, noWait)).toBe(1);
    // 30 in flight: nothing but 10 fits, and it is taken.
    expect(claimNext(offer, state, noWait)).toBe(2);
  });
});

describe('exports shared out to the sheet workers', () => {
  it('go largest first (the first of equals), each to whoever claims it first, and none twice', () => {
    const state = new Int32Array(new SharedArrayBuffer(4 * 4));
    const sizes = [10, 70, 30, 70];
    expect(claimLargestFree(state, sizes, TAKEN_BY_MAIN)).toBe(1);
    expect(claim(state, 2, TAKEN_BY_MAIN)).toBe(true);
    expect(claimLargestFree(state, sizes, TAKEN_BY_WORKER)).toBe(3);
    // Taken already: the main thread cannot have it too.
    expect(claim(state, 3, TAKEN_BY_MAIN)).toBe(false);
    expect(isFree(state, 0)).toBe(true);
    expect(claimLargestFree(state, sizes, TAKEN_BY_WORKER)).toBe(0);
    expect(claimLargestFree(state, sizes, TAKEN_BY_WORKER)).toBeUndefined();
    expect([...state]).toEqual([TAKEN_BY_WORKER, TAKEN_BY_MAIN, TAKEN_BY_MAIN, TAKEN_BY_WORKER]);
  });

  it('while the build goes on, only what keeps the workers within the limit, the largest that fits; after it, the largest left whatever its size', () => {
    // Word 0: KB in flight on the workers; then one word per export.
    const state = new Int32Array(new SharedArrayBuffer(4 * 6));
    const offered: Array<{ kb: number } | undefined> = [];
    const take = (limit: number | undefined) => claimLargestWithin(state, 0, 1, offered, limit);
    // Nothing offered yet: nothing to take.
    expect(take(100)).toBeUndefined();
    offered[3] = { kb: 500 };
    offered[1] = { kb: 40 };
    // The drives-sized export is over the limit: the small one is taken and counted.
    expect(take(100)).toBe(1);
    expect(state[0]).toBe(40);
    offered[0] = { kb: 70 };
    offered[2] = { kb: 50 };
    // 40 in flight: 70 would go over 100, 50 fits.
    expect(take(100)).toBe(2);
    expect(state[0]).toBe(90);
    expect(take(100)).toBeUndefined();
    // The first ends (its KB leave the count): 50 + 70 is still over; once the second ends, 70 fits.
    Atomics.sub(state, 0, 40);
    expect(take(100)).toBeUndefined();
    Atomics.sub(state, 0, 50);
    expect(take(100)).toBe(0);
    expect(take(100)).toBeUndefined();
    // What the main thread took is skipped; after the build there is no limit.
    offered[4] = { kb: 900 };
    expect(claim(state, 1 + 4, TAKEN_BY_MAIN)).toBe(true);
    expect(take(undefined)).toBe(3);
    expect(take(undefined)).toBeUndefined();
    expect([...state.subarray(1)]).toEqual([TAKEN_BY_WORKER, TAKEN_BY_WORKER, TAKEN_BY_WORKER, TAKEN_BY_WORKER, TAKEN_BY_MAIN]);
    expect(state[0]).toBe(70 + 500);
    // A limit of 0 (beside build workers): nothing before the build ends.
    const idle = new Int32Array(new SharedArrayBuffer(4 * 2));
    expect(claimLargestWithin(idle, 0, 1, [{ kb: 1 }], 0)).toBeUndefined();
    expect(idle[1]).toBe(FREE);
  });
});
