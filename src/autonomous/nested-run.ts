/**
 * The goal loop lent to an autogram: a `goal_loop` node, or code calling `goals.run({ goals })`, starts
 * an autonomous run (seed 004) whose goals the graph gives, and gets back how it ended. The engine
 * reaches it only through the host door (InterpreterOptions.host), so it never imports this layer.
 *
 * Nobody can be asked inside a conversation, so what may run comes only from the user: `--allow`,
 * `--yes` and the workspace's remembered rules; never from the graph, which may be untrusted. A graph
 * may ask for fewer steps than `--goal-max-steps`, never more.
 *
 * Every conversation is lent the namespace, and most never use it: the goal loop and its commands are
 * loaded when a run starts (they take longer to load than the rest of `chat`).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { HostNamespace } from '../engine/interpreter.js';
import type { McpServers } from '../mcp/servers.js';
import { UserError } from '../errors.js';
import type { EventBus, GoalEndReason } from '../events.js';
import { MAX_GOALS } from '../graph/parse.js';
import type { ModelSet } from '../llm/types.js';
import type { LongTermMemory } from '../../tools/command.js';
import type { SubAgentsLent } from '../../tools/sub-agents.js';
import type { GoalRunStore } from './goal-run-store.js';
import type { GoalResources } from './resources.js';
import type { PythonRuntime } from '../sandbox/index.js';

/** Steps a nested run may take unless `--goal-max-steps` says otherwise. */
export const DEFAULT_GOAL_MAX_STEPS = 20;

export interface NestedRunOptions {
  /** The graph whose nodes start the runs: its name and agent name name them. */
  graph: { name: string; config: { agentName: string } };
  /** The interpreter's models, metered: the runs' calls are counted with the conversation's. */
  models: ModelSet;
  /** The interpreter's event bus: the runs' `goal.*` events reach the same consumers. */
  events: EventBus;
  /** Where the runs are saved after every phase of a step. */
  store: GoalRunStore;
  /** How the runs open their sub-agents; none: they offer no sub-agent commands. */
  subAgents?: SubAgentsLent;
  /** The workspace folder (default ./workspace), created when missing. */
  workspace?: string;
  /** Commands that run without asking (`--allow`). */
  allow?: readonly string[];
  /** `--yes`: every command but deletion runs. */
  yes?: boolean;
  /** The most steps a run takes (`--goal-max-steps`, default DEFAULT_GOAL_MAX_STEPS). */
  maxSteps?: number;
  /** Told where each run is saved (its key in the store), as it starts. */
  onRunFile?: (key: string, node: string) => void;
  /** Told what is wrong with the workspace's allow rules file (it is then ignored). */
  onWarning?: (message: string) => void;
  /** The graph's long-term memory (config.memory), opened on first use: runs remember and recall in it. */
  memory?: () => Promise<LongTermMemory>;
  /** The runtime the runs' Python programs run in; default: the process's. */
  python?: PythonRuntime;
  /** The user's MCP servers: their tools are the runs' commands too. */
  mcp?: McpServers;
}

/** What a run gives the graph: stored in the node's variable, plain data. */
export interface NestedRunResult {
  /** True when the model finished with task_complete. */
  complete: boolean;
  /** Why the run ended (task_complete, max_steps, refused, loop, …). */
  reason: GoalEndReason;
  /** task_complete's reason, or what ended the run. */
  detail: string;
  /** Steps taken (model answers). */
  steps: number;
}

const requestSchema = z.strictObject({
  goals: z.array(z.string().trim().min(1)).min(1).max(MAX_GOALS),
  node: z.string().trim().min(1).optional(),
  maxSteps: z.number().int().positive().optional(),
});

const USAGE = `goals.run({ goals: ["…"] (1 to ${MAX_GOALS}), maxSteps?: N })`;

/**
 * The `goals` namespace: `run({ goals, node?, maxSteps? })` runs the goal loop to its end and returns
 * a NestedRunResult. An `--allow` name that is no command is refused here, before anything runs.
 */
export async function goalLoopHost(options: NestedRunOptions): Promise<HostNamespace> {
  if (options.allow?.length) {
    const [{ commandRegistry }, { checkAllowNames }] = await Promise.all([
      import('../../tools/index.js'),
      import('./allow-rules.js'),
    ]);
    checkAllowNames(options.allow, commandRegistry().names());
  }
  return { awaited: true, functions: { run: (request: unknown) => runNested(options, request) } };
}

async function runNested(options: NestedRunOptions, request: unknown): Promise<NestedRunResult> {
  const { goals, node = 'code', maxSteps } = parseRequest(request);
  const [{ GoalLoop }, { newRunState }, { workspaceFolder }, { allowedCommands }] = await Promise.all([
    import('./goal-loop.js'),
    import('./run-state.js'),
    import('./run-file.js'),
    import('./allow-rules.js'),
  ]);
  const cap = options.maxSteps ?? DEFAULT_GOAL_MAX_STEPS;
  const workspace = await workspaceFolder(resolve(options.workspace ?? 'workspace'));
  const { graph, models, events, store } = options;
  const state = newRunState({
    name: graph.config.agentName.trim() || 'Agent',
    role: `an AI that completes goals for the agent graph ${graph.name} (node ${node})`,
    goals,
    workspace,
    budget: { maxSteps: Math.min(maxSteps ?? cap, cap) },
  });
  const memory = await options.memory?.();
  const opened = await openResources(workspace, options, memory);
  try {
    const key = await store.create(state, [graph.name, node]);
    const allow = await allowedCommands(
      options.allow ?? [],
      opened.workspace.root,
      opened.registry.names(),
      (message) => options.onWarning?.(message),
    );
    options.onRunFile?.(key, node);
    const loop = new GoalLoop({
      state,
      chatbot: models.chatbot,
      registry: opened.registry,
      resources: opened.resources,
      resourceLines: opened.lines,
      permissions: { yes: options.yes ?? false, allow },
      keptAt: { store, key },
      events,
    });
    // A model failure is thrown as it is; the run stays saved (onRunFile said where) for --resume.
    const ended = await loop.run();
    const { reason, detail } = ended.ended!;
    return { complete: reason === 'task_complete', reason, detail, steps: ended.used.steps };
  } finally {
    opened.dispose();
  }
}

function parseRequest(request: unknown): z.infer<typeof requestSchema> {
  const parsed = requestSchema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new UserError(`goals.run: ${where}${issue?.message ?? 'unexpected arguments'}`, 1, `call ${USAGE}`);
}

async function openResources(
  workspace: string,
  { models, events, subAgents, mcp, onWarning, python }: NestedRunOptions,
  memory: LongTermMemory | undefined,
): Promise<GoalResources> {
  const { openGoalResources } = await import('./resources.js');
  try {
    return await openGoalResources({
      workspace,
      models,
      events,
      ...(memory && { memory }),
      ...(python && { python }),
      ...(subAgents && { subAgents }),
      ...(mcp && { mcp, onNotice: (message: string) => onWarning?.(message) }),
    });
  } catch (error) {
    throw new UserError(
      `cannot open the goal loop's workspace ${workspace}: ${(error as Error).message}`,
      2,
      'pass a folder it can use with --workspace DIR',
    );
  }
}
