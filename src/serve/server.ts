/**
 * A server's life: listen, count the work in flight, and shut down so that nothing is lost: stop
 * taking requests, end the event streams, let the turns in flight finish (for a bounded time; each is
 * saved as it finishes, and one cut short loses only that unfinished turn), then close.
 */
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { GoalLoopPermissions } from '../agent/open.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { Store } from '../store/store.js';
import { serveApp, type AppSetup } from './app.js';
import type { ServeContext, ServeLimits } from './context.js';
import { ConversationHub, type TurnRunner } from './conversations.js';
import type { Served } from './served.js';

export interface ServeSetup extends AppSetup {
  served: readonly Served[];
  store: Store;
  /** The store key of conversation `id`. */
  conversationKey(id: string): string;
  /** The store key of the run of flow pass `id`. */
  flowRunKey(id: string): string;
  goalLoop: GoalLoopPermissions;
  /** The server's MCP servers (its --mcp-config): lent to served agents' code and goal runs. */
  mcp?: McpServers;
  /** The models of goal runs started over HTTP. */
  models: ModelSet;
  /** DBOS is launched in this process: goal runs ask through DBOS messages (ServeContext.durable). */
  durable?: boolean;
  limits: ServeLimits & { maxWaiting: number; idleMs: number };
  /** On Postgres: turns run as durable workflows (durable-turns.ts). */
  turns?: TurnRunner;
  host: string;
  port: number;
  onProblem(message: string): void;
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
  const served = new Map(setup.served.map((item) => [item.name, item]));
  const agents = new Map(
    setup.served.flatMap((item) => (item.kind === 'agent' ? [[item.name, item] as const] : [])),
  );
  let beginClosing = () => {};
  const closing = new Promise<void>((resolve) => (beginClosing = resolve));
  const inFlight = new Set<Promise<unknown>>();
  const hub = new ConversationHub({
    store: setup.store,
    agents,
    world: {
      goalLoop: setup.goalLoop,
      ...(setup.mcp && { mcp: setup.mcp }),
      onWarning: setup.onProblem,
      onNote: setup.onProblem,
    },
    keyOf: setup.conversationKey,
    maxWaiting: setup.limits.maxWaiting,
    idleMs: setup.limits.idleMs,
    ...(setup.turns && { durable: setup.turns }),
  });
  const ctx: ServeContext = {
    served,
    hub,
    store: setup.store,
    goalLoop: setup.goalLoop,
    ...(setup.mcp && { mcp: setup.mcp }),
    models: setup.models,
    ...(setup.durable && { durable: true }),
    flowRunKey: setup.flowRunKey,
    limits: setup.limits,
    closing,
    track: (work) => {
      inFlight.add(work);
      void work.then(
        () => inFlight.delete(work),
        () => inFlight.delete(work),
      );
      return work;
    },
    onProblem: setup.onProblem,
  };
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
      await Promise.race([Promise.allSettled([stopped, ...inFlight]), delay(graceMs)]);
      await hub.close(Math.max(0, deadline - Date.now()));
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
