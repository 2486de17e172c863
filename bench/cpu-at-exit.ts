/**
 * Loaded with `node --import` into a process the design benchmark starts: when the process ends, writes
 * the CPU milliseconds it used, start-up included, to the file named by BENCH_CPU_FILE.
 */
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.BENCH_CPU_FILE;
  const { user, system } = process.cpuUsage();
  if (file) writeFileSync(file, String((user + system) / 1000));
});
