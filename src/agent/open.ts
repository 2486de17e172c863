/**
 * The one way to open an agent. Every agent of a run (the one the user opened with chat, call or
 * simulate, the designer, the designed agent under `--check`, a goal run's sub-agents) is an
 * interpreter created here, on the run's models, events and store, and lent what any agent gets: the
 * goal loop (`goals`, which `goal_loop` nodes run), flows (`flows`), the user's MCP tools (`mcp`) when
 * they have servers and, when its graph's config asks, long-term memory (`memory`). What the goal loop
 * may do comes from the user's permissions, never from a graph, and a sub-agent gets its parent's.
 */
import { resolve } from 'node:path';
import { goalLoopHost } from '../autonomous/nested-run.js';
import type { AgentOpener, AgentSpec } from '../engine/agent-opener.js';
import { FLOWS_NAMESPACE, GOALS_NAMESPACE, MCP_NAMESPACE, MEMORY_NAMESPACE } from '../engine/actions.js';
import { Interpreter } from '../engine/interpreter.js';
import type { EventBus } from '../events.js';
import { flowHost, type FlowHostOptions } from '../flow/nested.js';
import { mcpHost } from './mcp-host.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { PythonRuntime } from '../sandbox/index.js';
import type { Store } from '../store/store.js';
import type { AgentDesigner, SubAgentsLent } from '../../tools/sub-agents.js';

/** What goal_loop nodes may do: the user's flags (--workspace, --allow, --yes, --goal-max-steps). */
export interface GoalLoopPermissions {
  /** The folder runs work in (default ./workspace), created when missing. */
  workspace?: string;
  allow?: readonly string[];
  yes?: boolean;
  maxSteps?: number;
}

/** What every agent of one run shares. */
export interface AgentWorld {
  /** Metered: every agent's calls are counted together, as `model.call` events on `events`. */
  models: ModelSet;
  events: EventBus;
  store: Store;
  goalLoop?: GoalLoopPermissions;
  /** The user's MCP servers (--mcp-config, or their default file): lent as `mcp`, and to goal runs. */
  mcp?: McpServers;
  /** The models the nodes of a flow an agent runs name (flow/nested.ts), metered with `models`. */
  flowModels?: FlowHostOptions['nodeModels'];
  /** The folder flow files are found in, and only inside (the graph file's; a sub-agent's workspace). */
  folder: string;
  /** Told where a nested goal run is saved as it starts. */
  onRunFile?: (key: string, node: string) => void;
  /** Told what is wrong with the user's allow rules (they are then ignored). */
  onWarning?: (message: string) => void;
  /** Told what memory had to do (search by words alone, an index rebuilt). */
  onNote?: (message: string) => void;
  /** The runtime the agents' Python runs in; default: the process's. */
  python?: PythonRuntime;
}

/** Sub-agents nest no deeper: each level may start a goal run whose sub-agents start more. */
export const MAX_AGENT_DEPTH = 3;

/** The opener of `world`'s agents; `depth` counts the sub-agents above them. */
export function agentOpener(world: AgentWorld, depth = 0): AgentOpener {
  return (spec) => openAgent(world, spec, depth);
}

async function openAgent(world: AgentWorld, spec: AgentSpec, depth: number): Promise<Interpreter> {
  const { graph } = spec;
  const models = spec.models ?? world.models;
  const memory = graph.config.memory ? await memoryOf(graph, world) : undefined;
  return Interpreter.create({
    graph,
    models,
    ...(world.python && { python: world.python }),
    events: spec.events ?? world.events,
    host: {
      [GOALS_NAMESPACE]: await goalLoopHost({
        graph,
        models,
        events: world.events,
        store: world.store.goalRuns,
        ...world.goalLoop,
        ...(world.onRunFile && { onRunFile: world.onRunFile }),
        ...(world.onWarning && { onWarning: world.onWarning }),
        ...(memory && { memory: memory.open }),
        subAgents: subAgentsOf(world, depth),
        ...(world.mcp && { mcp: world.mcp }),
        ...(world.python && { python: world.python }),
      }),
      ...(memory && { [MEMORY_NAMESPACE]: memory.host }),
      [FLOWS_NAMESPACE]: flowHost({
        folder: world.folder,
        model: models.chatbot,
        ...(world.flowModels && { nodeModels: world.flowModels }),
        events: world.events,
        ...(world.mcp && { mcp: world.mcp }),
      }),
      ...(world.mcp && { [MCP_NAMESPACE]: mcpHost(world.mcp) }),
      ...spec.host,
    },
    ...(spec.selfReferential !== undefined && { selfReferential: spec.selfReferential }),
  });
}

/**
 * What a goal run started by an agent at `depth` opens its sub-agents with: agents of the same world in
 * the run's workspace, one level deeper, designed by the designer (loaded only when a run designs one).
 * Undefined past MAX_AGENT_DEPTH: such a run offers no sub-agent commands.
 */
export function subAgentsOf(world: AgentWorld, depth: number): SubAgentsLent | undefined {
  if (depth + 1 >= MAX_AGENT_DEPTH) return undefined;
  return (workspace) => {
    const inner: AgentWorld = { ...world, folder: workspace, goalLoop: { ...world.goalLoop, workspace } };
    const open = agentOpener(inner, depth + 1);
    const design: AgentDesigner = async (request) => {
      const { designAgent } = await import('../../meta/design.js');
      return designAgent({ ...request, models: world.models, events: world.events, open });
    };
    return { open, design };
  };
}

/**
 * The long-term memory of a graph whose config asks for it, in the goal loop's workspace: one store,
 * opened on first use, for its code nodes and its goal_loop nodes alike. Loaded only for such graphs.
 */
async function memoryOf(graph: GraphView, world: AgentWorld) {
  const [{ memoryHost, openMemory }, { agentNamespace }] = await Promise.all([
    import('../autonomous/memory.js'),
    import('../../memory/namespaces.js'),
  ]);
  let store: ReturnType<typeof openMemory> | undefined;
  const open = () =>
    (store ??= openMemory({
      workspace: resolve(world.goalLoop?.workspace ?? 'workspace'),
      namespace: graph.config.memory?.namespace ?? agentNamespace(graph.name),
      embedder: world.models.embedder,
      onNotice: (message) => world.onNote?.(message),
    }));
  return { open, host: memoryHost(open) };
}
