/**
 * Loaded with `node --import` into a process the memory benchmark starts (the CLI among them): when the
 * process ends, writes its peak resident memory in bytes to BENCH_PEAK_FILE. Linux's VmHWM is this
 * process image's own; getrusage's maxrss, the fallback elsewhere, keeps the spawning process's peak
 * across fork and exec, so it can only say at least as much.
 */
import { readFileSync, writeFileSync } from 'node:fs';

function peakBytes(): number {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kib !== undefined) return Number(kib) * 1024;
  } catch {
    // No /proc: not Linux.
  }
  return process.resourceUsage().maxRSS * 1024;
}

process.on('exit', () => {
  const file = process.env.BENCH_PEAK_FILE;
  if (file) writeFileSync(file, String(peakBytes()));
});
