/** What every route of a server shares: what it serves, where things are kept, and its limits. */
import type { GoalLoopPermissions } from '../agent/open.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { Store } from '../store/store.js';
import type { ConversationHub } from './conversations.js';
import type { Served } from './served.js';

export interface ServeLimits {
  /** The largest request body, in bytes; larger get 413. */
  maxBodyBytes: number;
  /** How long one request may take (a turn, a flow pass); longer get 504, and the work goes on. */
  deadlineMs: number;
}

export interface ServeContext {
  served: ReadonlyMap<string, Served>;
  hub: ConversationHub;
  store: Store;
  /** What goal runs may do: the server's own flags, never a request's. */
  goalLoop: GoalLoopPermissions;
  /** The server's MCP servers (--mcp-config): their tools are lent to served agents and goal runs. */
  mcp?: McpServers;
  /** The models goal runs started over HTTP use. */
  models: ModelSet;
  /**
   * DBOS is launched in this process (the server keeps its work in PostgreSQL): a goal run's questions
   * are DBOS messages (durable/approvals.ts), which any server of the database, or `meta-agent
   * approve`, answers.
   */
  durable?: boolean;
  /** The store key of the run of flow pass `id`. */
  flowRunKey(id: string): string;
  limits: ServeLimits;
  /** Settles when the server begins to shut down: streams end, new work is refused. */
  closing: Promise<void>;
  /** Counts `work` as in flight until it settles, so a shutdown waits for it. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Told what the server's operator should know (a failure that is not the client's). */
  onProblem(message: string): void;
}
