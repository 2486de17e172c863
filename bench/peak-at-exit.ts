/**
 * Loaded with `node --import` into a process the memory benchmark starts (the CLI among them): when the
 * process ends, writes its peak resident memory in bytes (getrusage's ru_maxrss) to BENCH_PEAK_FILE.
 */
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.BENCH_PEAK_FILE;
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS * 1024));
});
