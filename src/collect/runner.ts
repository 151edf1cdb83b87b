/**
 * The runner: planned routes fetched with bounded concurrency (p-limit).
 * Every route is tried and its outcome kept; a refused token cancels the
 * requests in flight at once and is the error the run stops with, before any
 * other failure.
 */
import pLimit from 'p-limit';
import type { PlannedRoute } from '../api/catalog.js';
import { TokenRejectedError } from '../errors.js';

export function runRoutes<T>(
  plan: readonly PlannedRoute[],
  concurrency: number,
  abort: AbortController,
  fetchOne: (p: PlannedRoute) => Promise<T>,
): Promise<T[]> {
  const refused = (err: unknown) => err instanceof TokenRejectedError;
  return settleBounded(
    plan,
    concurrency,
    fetchOne,
    (err) => refused(err) && abort.abort(err),
    (errors) => errors.find(refused) ?? errors[0],
  );
}

/**
 * `run` over every item, at most `concurrency` at once, each outcome kept; `onError` sees each failure as it
 * happens (to cancel the others), and once all are settled the error `pick` chooses among the failures is thrown.
 */
export async function settleBounded<I, T>(
  items: readonly I[],
  concurrency: number,
  run: (item: I) => Promise<T>,
  onError: (err: unknown) => void,
  pick: (errors: unknown[]) => unknown,
): Promise<T[]> {
  const limit = pLimit(concurrency);
  const settled = await Promise.allSettled(
    items.map((item) =>
      limit(async () => {
        try {
          return await run(item);
        } catch (err) {
          onError(err);
          throw err;
        }
      }),
    ),
  );
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  if (errors.length > 0) throw pick(errors);
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
