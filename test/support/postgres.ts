/**
 * A database of its own for a test file, on the run's one PostgreSQL server (postgres-server.ts):
 * `freshDatabase()` creates an empty one and returns its URL; it is dropped when the file's tests end.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';

const made: string[] = [];

/** The URL of a new, empty database. */
export async function freshDatabase(): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await onServer((client) => client.query(`create database ${name}`));
  made.push(name);
  const url = new URL(inject('postgresUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}

afterAll(async () => {
  for (const name of made.splice(0))
    await onServer((client) => client.query(`drop database if exists ${name} with (force)`)).catch(
      () => undefined,
    );
});

async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('postgresUrl') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
