/**
 * What a goal run works with besides its loop: its long-term memory and its resources (the workspace,
 * the sandbox, sub-agents, browsing), opened the same way for a run in the terminal (actions/run.ts)
 * and a run a durable workflow carries (goal-run-workflow.ts), wherever it was resumed.
 */
import { subAgentsOf } from '../agent/open.js';
import { openGoalResources, type GoalResources } from '../autonomous/resources.js';
import type { RunState } from '../autonomous/run-state.js';
import { InvalidFileError } from '../errors.js';
import type { EventBus } from '../events.js';
import type { ModelSet } from '../llm/types.js';
import type { Store } from '../store/store.js';
import type { LongTermMemory } from '../../tools/command.js';
import type { Memory } from '../../memory/memory.js';

/** What the user let a run do beyond its workspace: the flags of `meta-agent run`. */
export interface RunGrants {
  yes?: boolean;
  allow?: string[];
  allowWeb?: string[];
  allowPrivateNetwork?: boolean;
}

/**
 * The run's long-term memory, unless it has none (--no-memory): in `database` when one is named (shared
 * by every run on it), else in the workspace; `say` gets its notices.
 */
export async function openRunMemory(
  state: RunState,
  models: ModelSet,
  say: (message: string) => void,
  database?: string,
): Promise<Memory | undefined> {
  if (state.memory === undefined) return undefined;
  const { openMemory } = await import('../autonomous/memory.js');
  return openMemory({
    workspace: state.workspace,
    ...(database !== undefined && { database }),
    namespace: state.memory,
    embedder: models.embedder,
    onNotice: say,
  });
}

/**
 * The run's workspace, sandbox and sub-agents (brought back with their conversations when resumed). A
 * sub-agent is opened as any agent is, and its own goal_loop nodes may do what this run's commands may.
 */
export async function openRunResources(
  state: RunState,
  world: { models: ModelSet; events: EventBus; store: Store },
  grants: RunGrants,
  memory: LongTermMemory | undefined,
): Promise<GoalResources> {
  const goalLoop = {
    workspace: state.workspace,
    ...(grants.allow && { allow: grants.allow }),
    ...(grants.yes && { yes: true }),
  };
  const subAgents = subAgentsOf({ ...world, goalLoop, folder: state.workspace }, 0);
  try {
    return await openGoalResources({
      workspace: state.workspace,
      models: world.models,
      events: world.events,
      ...(subAgents && { subAgents }),
      ...(memory && { memory }),
      ...(grants.allowWeb && { allowWeb: grants.allowWeb }),
      ...(grants.allowPrivateNetwork && { allowPrivateNetwork: true }),
      ...(state.agents !== undefined && { agents: state.agents }),
    });
  } catch (error) {
    throw new InvalidFileError(
      `cannot open the run's workspace ${state.workspace}: ${(error as Error).message}`,
    );
  }
}
