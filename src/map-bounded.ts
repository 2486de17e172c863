/**
 * Runs independent async jobs with at most `limit` in flight: the designer's node fields, a flow step's
 * ready nodes, an AIPL turn's model calls. So the number of sequential model round trips depends on the
 * limit, not on how much work there is. A leaf module: every layer may import it.
 */

/**
 * Maps `items` through `job` with at most `limit` jobs running at once; results keep the input order.
 * A job that throws rejects the whole map once the jobs already running have settled, so no call is
 * left running unobserved.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  job: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;

  // Each worker takes the next unclaimed item until none is left or one job has failed.
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await job(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}
