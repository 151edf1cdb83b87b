/**
 * The runner: planned routes fetched with bounded concurrency (p-limit).
 * Every route is tried and its outcome kept; a refused token cancels the
 * requests in flight at once and is the error the run stops with, before any
 * other failure.
 */
import pLimit from 'p-limit';
import type { PlannedRoute } from '../api/catalog.js';
import { TokenRejectedError } from '../errors.js';

export async function runRoutes<T>(
  plan: readonly PlannedRoute[],
  concurrency: number,
  abort: AbortController,
  fetchOne: (p: PlannedRoute) => Promise<T>,
): Promise<T[]> {
  const limit = pLimit(concurrency);
  const settled = await Promise.allSettled(
    plan.map((p) =>
      limit(async () => {
        try {
          return await fetchOne(p);
        } catch (err) {
          if (err instanceof TokenRejectedError) abort.abort(err);
          throw err;
        }
      }),
    ),
  );
  const fatal =
    settled.find(
      (s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason instanceof TokenRejectedError,
    ) ?? settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (fatal) throw fatal.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
