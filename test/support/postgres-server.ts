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
