/**
 * The shared claims of parts offered to every build worker at once (kept
 * apart from build-worker.ts, whose loading starts a worker's message
 * handler: the main bundle and the other workers import this).
 */
import type { PartTask } from './build-worker.js';
import { claimLargestWithin, isFree } from '../util/claims.js';

/**
 * Parts offered to every worker at once (a whole collection): each worker
 * claims the next one itself in `state`, shared with the main thread and the
 * other workers, so that it never waits for the main thread to be free to
 * hand it work (a long parse there used to leave the worker idle). `state`:
 * OFFER_FLYING (KB of the parts being built on workers), OFFER_GENERATION
 * (one more each time a worker ends a part), then a word per task
 * (src/util/claims.ts).
 */
export interface PartOffer {
  readonly type: 'offer';
  readonly state: SharedArrayBuffer;
  /** A worker takes a part only while the parts on workers stay within this (or none is being built). */
  readonly budgetKb: number;
  /** Largest first; a task's id is its position. */
  readonly tasks: ReadonlyArray<PartTask & { readonly kb: number }>;
}

export const OFFER_FLYING = 0;
export const OFFER_GENERATION = 1;
export const OFFER_TASKS = 2;

/**
 * The next task of the offer this worker may build (the largest free one
 * within the budget), claimed; undefined once none is free. Waits, without
 * the main thread, while the free ones are over the budget.
 */
export function claimNext(offer: { readonly budgetKb: number; readonly tasks: ReadonlyArray<{ readonly kb: number }> }, state: Int32Array, wait = (generation: number) => void Atomics.wait(state, OFFER_GENERATION, generation, 1000)): number | undefined {
  for (;;) {
    const generation = Atomics.load(state, OFFER_GENERATION);
    // The tasks come largest first, so the largest that fits is the first free one that fits; one part always goes through.
    const i = claimLargestWithin(state, OFFER_FLYING, OFFER_TASKS, offer.tasks, offer.budgetKb, true);
    if (i !== undefined) return i;
    if (!offer.tasks.some((_, j) => isFree(state, OFFER_TASKS + j))) return undefined;
    // Every free part is over the budget: wait for a worker to end one (a part the main thread takes frees nothing).
    wait(generation);
  }
}

/** A worker's part is built (or failed): its KB leave the budget, and a worker waiting for room looks again. */
export function endClaim(state: Int32Array, kb: number): void {
  Atomics.sub(state, OFFER_FLYING, kb);
  Atomics.add(state, OFFER_GENERATION, 1);
  Atomics.notify(state, OFFER_GENERATION);
}
