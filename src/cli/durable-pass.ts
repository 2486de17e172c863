/**
 * `flow run --database`: the pass as a durable workflow (durable/flow-pass.ts) that this process carries
 * and shows as it goes. The pass is the run's pass in progress, or the next one; its workflow id is the
 * run's key and the pass's number, so running the command again after a stop or a crash goes on with
 * that same pass: a pass the user stopped (Ctrl+C cancels its workflow) is resumed here at once, and a
 * pass whose process died is waited for until the reaper puts it back, here or on a worker. Either way
 * its committed nodes are not asked again.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { FlowPassInput } from '../durable/flow-pass.js';
import { UserError } from '../errors.js';
import type { EventBus } from '../events.js';
import { Interrupted, untilAborted } from '../interrupt.js';
import { passInputs, resumedStructure } from '../flow/pass-plan.js';
import type { FlowRunState } from '../flow/run-state.js';
import type { PassReport } from '../flow/runner.js';
import type { FlowFile } from '../flow/schema.js';
import type { McpServers } from '../mcp/servers.js';
import type { Database } from '../postgres/database.js';
import { databaseUrl } from './database.js';
import { modelOptionsToKeep } from './model-options.js';
import type { ModelOptionValues } from './options.js';
import { writeErr } from './terminal.js';

export interface DurablePass {
  flow: FlowFile;
  /** The run's key in the database. */
  key: string;
  /** The run as saved there; undefined for a new run. */
  saved: FlowRunState | undefined;
  inputs: Record<string, string>;
  concurrency?: number;
  contextTokens?: number;
  models: ModelOptionValues;
  /** The database the run is kept in; the pass's workflow keeps it there too (durable-workflows.ts). */
  db: Database;
  /** The `--database` value (else the environment's URL). */
  database: string | undefined;
  events: EventBus;
  /** Ctrl+C: the pass's workflow is cancelled, to be resumed by the same command. */
  stop: AbortSignal;
  /** How the user goes on with the run after a stop. */
  again: string;
  /** The user's MCP servers: this process carries the pass, so its tool nodes call them. */
  mcp?: McpServers;
}

/** Runs (or goes on with) the pass, and gives its report. */
export async function runDurablePass(pass: DurablePass): Promise<PassReport> {
  const { flow, saved, inputs } = pass;
  // What the runner would refuse, refused before the workflow begins, so no workflow records it.
  if (saved?.current) resumedStructure(flow, saved, inputs);
  else passInputs(flow, inputs);
  const { startDurable } = await import('./durable-workflows.js');
  const { attachFlowPassFront, flowPassId, nextPass, startFlowPass } =
    await import('../durable/flow-pass.js');
  const durable = await startDurable({
    db: pass.db,
    url: databaseUrl(pass.database)!,
    role: 'flow',
    // Only its own pass, and what a dead process left (DBOS's internal queue, which every process takes).
    listen: [],
    onProblem: (message) => writeErr(`warning: ${message}\n`),
    ...(pass.mcp && { mcp: pass.mcp }),
  });
  try {
    const number = nextPass(saved);
    const id = flowPassId(pass.key, number);
    const detach = attachFlowPassFront(id, { events: pass.events });
    try {
      const status = (await DBOS.getWorkflowStatus(id))?.status;
      if (status === 'PENDING')
        writeErr(
          `[flow] pass ${number} of "${pass.key}" is running elsewhere, or its process died: waiting for it (a dead process's pass goes on within seconds)\n`,
        );
      const handle =
        status === 'CANCELLED'
          ? await DBOS.resumeWorkflow<PassReport>(id)
          : await startFlowPass({
              key: pass.key,
              pass: number,
              flow,
              inputs: saved?.current?.inputs ?? inputs,
              ...(pass.concurrency !== undefined && { concurrency: pass.concurrency }),
              ...(pass.contextTokens !== undefined && { contextTokens: pass.contextTokens }),
              models: modelOptionsToKeep(pass.models) as FlowPassInput['models'],
            });
      try {
        return await untilAborted(handle.getResult(), pass.stop);
      } catch (error) {
        if (!(error instanceof Interrupted)) throw error;
        await DBOS.cancelWorkflow(id);
        throw new UserError(`flow pass stopped; finish it with: ${pass.again}`, 130);
      }
    } finally {
      detach();
    }
  } finally {
    await durable.shutdown();
  }
}
