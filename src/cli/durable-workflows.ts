/**
 * Every durable workflow meta-agent has, loaded before the durable runtime launches, and the launch
 * itself for the commands. DBOS runs a workflow only in a process that registered it (at import), and a
 * process may be handed whatever a dead process left (the reaper puts a workflow that was on no queue on
 * DBOS's internal one, which every process takes from), so every command that launches the runtime
 * registers the same set, and lends it what it needs: add a module here when it declares workflows.
 * (A conversation's turns are lent their hub by serve and worker, turn-serving.ts; in any other process
 * a turn handed to it goes back on the `turns` queue.)
 */
import { hostFlowPasses } from '../durable/flow-pass.js';
import { launchDurable, type Durable } from '../durable/runtime.js';
import type { McpServers } from '../mcp/servers.js';
import type { Database } from '../postgres/database.js';
import { postgresStore } from '../store/postgres.js';
import type { Store } from '../store/store.js';
import { flowPassHost } from './flow-pass-host.js';
import { hostGoalRuns } from './goal-run-workflow.js';
import { quietPgBusyClientWarning } from './pg-warning.js';
import { CLAIMANT } from './store-for.js';
import { version } from './version.js';

/** Imports every module that registers durable workflows. */
export async function loadDurableWorkflows(): Promise<void> {
  await Promise.all([
    import('../durable/flow-pass.js'),
    import('./simulation-workflow.js'),
    import('./goal-run-workflow.js'),
    import('../durable/approvals.js'),
    import('../serve/durable-turns.js'),
  ]);
}

export interface StartDurableOptions {
  db: Database;
  url: string;
  /** serve, worker, run, flow, simulate… */
  role: string;
  executorId?: string;
  /** The queues this process takes work from; default all. */
  listen?: readonly string[];
  /** The store on `db` the workflows keep their work in; default one of this process's own. */
  store?: Store;
  /** The user's MCP servers, lent to the flow passes this process carries (their tool nodes). */
  mcp?: McpServers;
  onProblem(message: string): void;
}

/**
 * Loads every workflow and lends it what it needs (the store on the same database, which makes its
 * tables before its first query), then launches the durable runtime under meta-agent's version.
 */
export async function startDurable(options: StartDurableOptions): Promise<Durable> {
  quietPgBusyClientWarning();
  await loadDurableWorkflows();
  const store = options.store ?? postgresStore(options.db, { claimant: CLAIMANT });
  hostFlowPasses(flowPassHost(store, options.mcp));
  hostGoalRuns({ store, database: options.url, onProblem: options.onProblem });
  return launchDurable({ ...options, version: version() });
}
