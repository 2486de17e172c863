/**
 * The Postgres memory benchmark's server when no real PostgreSQL with pgvector is named: PGlite (the
 * server compiled to WASM) with PGlite's pgvector, served over the wire protocol by pglite-socket, in a
 * process of its own so that the benchmark talks to it over loopback as to any server and its CPU is
 * not the benchmark's. Prints its URL on one line, then serves until stdin closes.
 *
 * Usage: `node dist/bench/pgvector-server.js` (memory-postgres.bench.ts spawns it).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const db = await PGlite.create({ extensions: { vector } });
const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 4 });
await server.start();
process.stdout.write(`postgres://postgres@${server.getServerConn()}/postgres\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.stop().then(() => db.close());
});
