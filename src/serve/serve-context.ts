/**
 * What a server's routes share, made once for a process that serves: over HTTP (server.ts) or over MCP's
 * stdio (the `mcp` command). It holds the conversations and counts the work in flight, so that a
 * shutdown can wait for it.
 */
import type { AgentWorld, GoalLoopPermissions } from '../agent/open.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { Store } from '../store/store.js';
import type { ServeContext, ServeLimits } from './context.js';
import { ConversationHub, type TurnRunner } from './conversations.js';
import type { Served } from './served.js';

export interface ContextSetup {
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
  onProblem(message: string): void;
}

export interface ServingContext {
  ctx: ServeContext;
  /** Settles `ctx.closing`: streams end, new work is refused. */
  beginClosing(): void;
  /** The work tracked and not yet settled. */
  inFlight(): Promise<unknown>[];
}

/**
 * What every agent a server opens shares besides its models, events, store and folder: the server's
 * goal-loop permissions and MCP servers, and its operator told of warnings and notes.
 */
export function servedWorld(
  server: Pick<ServeContext, 'goalLoop' | 'mcp' | 'onProblem'>,
): Omit<AgentWorld, 'models' | 'events' | 'store' | 'folder'> {
  return {
    goalLoop: server.goalLoop,
    ...(server.mcp && { mcp: server.mcp }),
    onWarning: server.onProblem,
    onNote: server.onProblem,
  };
}

export function serveContext(setup: ContextSetup): ServingContext {
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
    world: servedWorld(setup),
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
  return { ctx, beginClosing, inFlight: () => [...inFlight] };
}
