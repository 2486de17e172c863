/**
 * A goal run as a durable workflow (DBOS), for runs kept in PostgreSQL: `meta-agent run --database`
 * carries it in its own process, with the terminal as its front end; `--queue` hands it to the
 * `goals` queue, where any `meta-agent worker` takes it; and when the process carrying it dies, the
 * reaper (durable/runtime.ts) puts it back, and another process carries it on.
 *
 * Each phase of a step (answered, approved, running, result) is a row of the store, not a DBOS step:
 * the goal loop saves the run after every phase and resumes from the last one saved, so a recovered
 * workflow does not replay anything, it loads the run and goes on. A command with a side effect is
 * claimed in the store before it runs (its `running` phase, refused to a second claimant), so it never
 * runs twice, and a run that finds one `running` tells the model it was interrupted. DBOS gives the run
 * its durability and its move to another process; its input names the run and what the user let it
 * do, never a key (each process uses its own environment's).
 *
 * The workspace is a path every process that carries runs can reach: the same folder on a shared disk
 * (or one machine). A run is not pinned to the worker that began it, since a pinned run would wait for
 * that one worker to come back when it dies.
 */
import { DBOS, type DBOSClient } from '@dbos-inc/dbos-sdk';
import { allowedCommands } from '../autonomous/allow-rules.js';
import { GoalLoop, type Approver } from '../autonomous/goal-loop.js';
import type { RunState } from '../autonomous/run-state.js';
import { DurableApprover } from '../durable/approvals.js';
import { UserError } from '../errors.js';
import { EventBus } from '../events.js';
import { UsageMeter } from '../llm/usage.js';
import type { Store } from '../store/store.js';
import { openRunMemory, openRunResources, runSettings, type RunGrants } from './goal-run-parts.js';
import { modelsFromOptions } from './model-options.js';
import type { ModelOptionValues } from './options.js';

/** What a durable goal run is given: its key in the store and what its user let it do. JSON. */
export interface GoalRunInput {
  /** The run's key in the store. */
  key: string;
  /** The model options the run was started with; keys come from the environment of each process. */
  models: ModelOptionValues;
  grants: RunGrants;
  contextTokens?: number;
}

/** How a durable run ended: the loop's reason, as the run records it. */
export type GoalRunEnd = NonNullable<RunState['ended']>;

/** What a process that carries goal runs lends them: the store they are kept in. */
export interface GoalRunHost {
  store: Store;
  /** The database's URL: a run's long-term memory is kept there too. */
  database?: string;
  /** Told what the process's operator should know (a memory notice, a remembered rule dropped). */
  onProblem(message: string): void;
}

/** A front end in this process for one run: the terminal that started it. */
export interface GoalRunFront {
  events: EventBus;
  /** Answers its questions; none: they are messages (`meta-agent approve`). */
  approver?: Approver;
  rememberRule?: (command: string) => Promise<void>;
  /** Stops the run as its user's (Ctrl+C twice). */
  signal?: AbortSignal;
  /** Given the loop once it runs, for Ctrl+C once (`interrupt`). */
  started?(loop: GoalLoop): void;
}

let host: GoalRunHost | undefined;
const fronts = new Map<string, GoalRunFront>();

/** Makes this process one that carries goal runs, on `store` (a process launches DBOS once). */
export function hostGoalRuns(given: GoalRunHost): void {
  host = given;
}

/** Lets the run `id`, while this process carries it, report to and ask `front`; returns the undo. */
export function attachFront(id: string, front: GoalRunFront): () => void {
  fronts.set(id, front);
  return () => {
    if (fronts.get(id) === front) fronts.delete(id);
  };
}

/** The workflow id of a run's first start (a resumed run's starts add a suffix of their own). */
export function goalRunId(run: string): string {
  return `goal:${run}`;
}

/**
 * Carries the run named by `input` on from where the store has it, until it ends; a recovered
 * workflow runs this again from the start, which is the same thing.
 */
async function carryRun(input: GoalRunInput): Promise<GoalRunEnd> {
  if (!host)
    throw new UserError(
      'this process does not carry goal runs (only `meta-agent worker` and `meta-agent run --database` do)',
    );
  const { store, onProblem, database } = host;
  const state = await store.goalRuns.load(input.key);
  if (state.ended) return state.ended;
  const front = fronts.get(state.id);
  const events = front?.events ?? new EventBus();
  const { models, endpoints } = await modelsFromOptions(input.models);
  const metered = new UsageMeter(events).meter(models);
  const memory = await openRunMemory(
    state,
    metered,
    (message) => events.emit({ type: 'goal.warning', step: state.used.steps, kind: 'memory', message }),
    database,
  );
  try {
    const opened = await openRunResources(
      state,
      { models: metered, endpoints, events, store },
      input.grants,
      await runSettings(input.grants),
      memory,
      (message) => events.emit({ type: 'goal.warning', step: state.used.steps, kind: 'mcp', message }),
    );
    try {
      const allow = await allowedCommands(
        input.grants.allow ?? [],
        opened.workspace.root,
        opened.registry.names(),
        onProblem,
      );
      const loop = new GoalLoop({
        state,
        chatbot: metered.chatbot,
        registry: opened.registry,
        ...(input.contextTokens !== undefined && { contextTokens: input.contextTokens }),
        resources: opened.resources,
        resourceLines: opened.lines,
        permissions: { yes: input.grants.yes ?? false, allow },
        approver: front?.approver ?? new DurableApprover(state.id),
        ...(front?.rememberRule && { rememberRule: front.rememberRule }),
        keptAt: { store: store.goalRuns, key: input.key },
        events,
      });
      front?.started?.(loop);
      const ended = await loop.run(front?.signal);
      return ended.ended!;
    } finally {
      opened.dispose();
    }
  } finally {
    await memory
      ?.close()
      .catch((error: unknown) => onProblem(`memory was not saved: ${(error as Error).message}`));
  }
}

const WORKFLOW = 'goal.run';

/** The goal-run workflow; registered at import, before DBOS launches. */
export const goalRunWorkflow = DBOS.registerWorkflow(carryRun, { name: WORKFLOW });

/**
 * Starts the run `input` names as workflow `workflowID`: in this process at once, or on the `goals`
 * queue for the workers when `queue`.
 */
export function startGoalRun(input: GoalRunInput, workflowID: string, queue: boolean) {
  return DBOS.startWorkflow(goalRunWorkflow, { workflowID, ...(queue && { queueName: 'goals' }) })(input);
}

/**
 * Puts the run `input` names on the `goals` queue as workflow `workflowID`, for the workers of
 * meta-agent `version`, from a process that does not launch DBOS (`run --queue`, a script).
 */
export async function enqueueGoalRun(
  client: DBOSClient,
  input: GoalRunInput,
  workflowID: string,
  version: string,
): Promise<void> {
  await client.enqueue(
    { queueName: 'goals', workflowName: WORKFLOW, workflowID, appVersion: version },
    input,
  );
}

/**
 * The run's workflows that a process carries now (PENDING, with the executor that carries it) or that
 * wait on a queue (ENQUEUED).
 */
export async function carriersOf(
  lister: Pick<DBOSClient, 'listWorkflows'>,
  run: string,
): Promise<Array<{ workflowID: string; status: string; executorId?: string }>> {
  const live = await lister.listWorkflows({
    workflowName: WORKFLOW,
    workflow_id_prefix: goalRunId(run),
    status: ['PENDING', 'ENQUEUED'],
    loadInput: false,
    loadOutput: false,
  });
  return live.map(({ workflowID, status, executorId }) => ({ workflowID, status, executorId }));
}
