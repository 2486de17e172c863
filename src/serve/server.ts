/**
 * A server's life: listen, count the work in flight, and shut down so that nothing is lost: stop
 * taking requests, end the event streams, let the turns in flight finish (for a bounded time; each is
 * saved as it finishes, and one cut short loses only that unfinished turn), then close.
 */
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { serveApp, type AppSetup } from './app.js';
import type { ServeContext } from './context.js';
import { serveContext, type ContextSetup } from './serve-context.js';

export interface ServeSetup extends AppSetup, ContextSetup {
  host: string;
  port: number;
  /** Runs once the server's hub is made, before it listens (serve on Postgres launches DBOS here). */
  beforeListen?(ctx: ServeContext): Promise<void>;
}

export interface RunningServer {
  url: string;
  ctx: ServeContext;
  /** Stops taking requests and waits up to `graceMs` for the work in flight; then closes. */
  shutdown(graceMs: number): Promise<void>;
}

export async function startServer(setup: ServeSetup): Promise<RunningServer> {
  const { ctx, beginClosing, inFlight } = serveContext(setup);
  const app = serveApp(ctx, setup);
  const server = createAdaptorServer({ fetch: app.fetch, hostname: setup.host });
  let stopping = false;
  // A connection kept alive for a next request would hold the shutdown: each is closed once its
  // response is done (server.close() closes only those idle at the time).
  server.on('request', (_request, response: ServerResponse) =>
    response.once('close', () => {
      if (stopping && 'closeIdleConnections' in server) setImmediate(() => server.closeIdleConnections());
    }),
  );
  await setup.beforeListen?.(ctx);
  await listen(server, setup.port, setup.host);
  const { port } = server.address() as AddressInfo;
  const host = setup.host.includes(':') ? `[${setup.host}]` : setup.host;
  return {
    url: `http://${host}:${port}`,
    ctx,
    shutdown: async (graceMs) => {
      stopping = true;
      beginClosing();
      // Closing waits for the requests in flight to be answered; idle connections close at once.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + graceMs;
      await Promise.race([Promise.allSettled([stopped, ...inFlight()]), delay(graceMs)]);
      await ctx.hub.close(Math.max(0, deadline - Date.now()));
      if ('closeAllConnections' in server) server.closeAllConnections();
      await stopped;
    },
  };
}

function listen(server: ServerType, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
