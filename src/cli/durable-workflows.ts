/**
 * Every durable workflow meta-agent has, loaded before the durable runtime launches, and the launch
 * itself for the commands. DBOS runs a workflow only in a process that registered it (at import), and a
 * process may be handed whatever a dead process left (the reaper puts a workflow that was on no queue on
 * DBOS's internal one, which every process takes from), so every command that launches the runtime
 * registers the same set, and lends it what it needs: add a module here when it declares workflows.
 */
import { hostFlowPasses } from '../durable/flow-pass.js';
import { launchDurable, type Durable } from '../durable/runtime.js';
import type { Database } from '../postgres/database.js';
import { migrateStore, postgresStore } from '../store/postgres.js';
import { flowPassHost } from './flow-pass-host.js';
import { CLAIMANT } from './store-for.js';
import { version } from './version.js';

/** Imports every module that registers durable workflows. */
export async function loadDurableWorkflows(): Promise<void> {
  await Promise.all([import('../durable/flow-pass.js'), import('./simulation-workflow.js')]);
}

export interface StartDurableOptions {
  db: Database;
  url: string;
  /** serve, worker, run, flow, simulate… */
  role: string;
  executorId?: string;
  /** The queues this process takes work from; default all. */
  listen?: readonly string[];
  onProblem(message: string): void;
}

/**
 * Loads every workflow and lends it what it needs (a flow pass: the store on the same database), then
 * launches the durable runtime under meta-agent's version.
 */
export async function startDurable(options: StartDurableOptions): Promise<Durable> {
  await loadDurableWorkflows();
  await migrateStore(options.db);
  hostFlowPasses(flowPassHost(postgresStore(options.db, { claimant: CLAIMANT })));
  return launchDurable({ ...options, version: version() });
}
