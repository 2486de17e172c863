/**
 * How deep a parsed JSON value nests. `JSON.parse` takes any depth, but `JSON.stringify`, structured
 * clones and recursive checks do not: a value nested a hundred thousand deep parses and then fails
 * wherever it is next written. Measured without recursion, so measuring cannot overflow either. A leaf.
 */

/** Whether `value` nests objects and arrays more than `limit` deep (a scalar is depth 0). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > limit) return true;
    for (const inner of Object.values(current)) pending.push([inner, depth + 1]);
  }
  return false;
}
