import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // isolated-vm refuses to run when Node's startup snapshot is in use.
    execArgv: ['--no-node-snapshot'],
    pool: 'forks',
    // Most test files wait on subprocesses and servers more than they compute: on a machine of two cores,
    // vitest's default (the cores less one) would run them one at a time, and leave a core idle.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    // One real PostgreSQL for the run; each test file makes its own database on it.
    globalSetup: ['./test/support/postgres-server.ts'],
    // Three files at once on two cores: a test that starts a dozen CLI processes in a row (the kill -9
    // ones) may take half a minute when its neighbours are busy.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
