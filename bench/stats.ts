/** What every benchmark reports: the median and 95th percentile of its samples, printed as a table. */

/** The median and 95th percentile of `values`: the sample at index ⌊q·n⌋ of the sorted values. */
export function quantiles(values: readonly number[]): { median: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p95: at(0.95) };
}

/**
 * Prints `title`, then `header` and `rows` in aligned columns two spaces apart: the first `leftColumns`
 * columns (text) padded on the right, the rest (figures) on the left.
 */
export function printTable(
  title: string,
  header: readonly string[],
  rows: readonly (readonly string[])[],
  leftColumns = 1,
): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (cells: readonly string[]) =>
    cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(title);
  console.log(format(header));
  for (const row of rows) console.log(format(row));
}

/** What a row says of its goal. */
export function verdict(met: boolean): 'met' | 'missed' {
  return met ? 'met' : 'missed';
}

/** The sample at index ⌊q·n⌋ of the sorted `values` (q = 0.99: the 99th percentile). */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
