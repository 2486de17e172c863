/**
 * Every durable workflow meta-agent has, loaded before the durable runtime launches, and the launch
 * itself for the commands. DBOS runs a workflow only in a process that registered it (at import), and a
 * process takes whatever its queues hold, so serve, worker and every other command that launches the
 * runtime register the same set: add a module here when it declares workflows.
 */
import type { Database } from '../postgres/database.js';
import { launchDurable, type Durable } from '../durable/runtime.js';
import { quietPgBusyClientWarning } from './pg-warning.js';
import { version } from './version.js';

/** Imports every module that registers durable workflows. */
export async function loadDurableWorkflows(): Promise<void> {
  await Promise.all([import('../serve/durable-turns.js')]);
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

/** Loads every workflow, then launches the durable runtime under meta-agent's version. */
export async function startDurable(options: StartDurableOptions): Promise<Durable> {
  quietPgBusyClientWarning();
  await loadDurableWorkflows();
  return launchDurable({ ...options, version: version() });
}
