/**
 * What a goal run works with besides its loop: its long-term memory and its resources (the workspace,
 * the sandbox, sub-agents, browsing), opened the same way for a run in the terminal (actions/run.ts)
 * and a run a durable workflow carries (goal-run-workflow.ts), wherever it was resumed.
 */
import { subAgentsOf } from '../agent/open.js';
import { openGoalResources, type GoalResources, type ShellGrant } from '../autonomous/resources.js';
import type { RunState } from '../autonomous/run-state.js';
import { InvalidFileError } from '../errors.js';
import type { EventBus } from '../events.js';
import type { ResolvedEndpoints } from '../llm/config.js';
import { mediaFor } from '../llm/media.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import { mcpServersFor } from './mcp-setup.js';
import type { Store } from '../store/store.js';
import type { LongTermMemory, WebSearch } from '../../tools/command.js';
import { searchFromEnv } from '../../tools/web-search.js';
import type { Memory } from '../../memory/memory.js';

/** What the user let a run do beyond its workspace: the flags of `meta-agent run`. */
export interface RunGrants {
  yes?: boolean;
  /** The MCP configuration the run's tools come from (--mcp-config; default: the user's mcp.json). */
  mcpConfig?: string;
  allow?: string[];
  allowWeb?: string[];
  allowPrivateNetwork?: boolean;
  /** execute_shell, as decided from --allow-shell on the machine the run started on (shell-option.ts). */
  shell?: ShellGrant;
}

/** What a run takes from the user's settings beside its flags: the search provider and the MCP servers. */
export interface RunSettings {
  search: WebSearch | undefined;
  /** Not started: each server starts when a command first needs it. */
  mcp: McpServers | undefined;
}

/**
 * The run's settings: META_AGENT_SEARCH_URL (or Brave's key) and the MCP file. Worked out before a new
 * run is written, so a mistake in them (a bad address, a malformed file) leaves nothing behind.
 */
export async function runSettings(grants: RunGrants): Promise<RunSettings> {
  return { search: searchFromEnv(), mcp: await mcpServersFor(grants) };
}

/**
 * The run's long-term memory, unless it has none (--no-memory): in `database` when one is named (shared
 * by every run on it), else in the workspace; `say` gets its notices. A database whose server has no
 * pgvector keeps the run going with its memory in the workspace, and says so: memory is on by default,
 * and a plain PostgreSQL is enough for everything else.
 */
export async function openRunMemory(
  state: RunState,
  models: ModelSet,
  say: (message: string) => void,
  database?: string,
): Promise<Memory | undefined> {
  if (state.memory === undefined) return undefined;
  const { openMemory } = await import('../autonomous/memory.js');
  const location = {
    workspace: state.workspace,
    namespace: state.memory,
    embedder: models.embedder,
    onNotice: say,
  };
  if (database === undefined) return openMemory(location);
  try {
    return await openMemory({ ...location, database });
  } catch (error) {
    const { NoPgvector } = await import('../../memory/postgres-schema.js');
    if (!(error instanceof NoPgvector)) throw error;
    say(`${error.message}: this run's memory is kept in its workspace instead, not shared with other runs`);
    return openMemory(location);
  }
}

/**
 * The run's workspace, sandbox, sub-agents (brought back with their conversations when resumed), the
 * tools of `settings` (search, MCP) and the media endpoints of the chatbot's server (`endpoints`: where
 * the models resolved). A sub-agent is opened as any agent is, and its own goal_loop nodes may do what
 * this run's commands may. `say` is told what the run goes without (an MCP server that did not start).
 */
export async function openRunResources(
  state: RunState,
  world: { models: ModelSet; endpoints: ResolvedEndpoints; events: EventBus; store: Store },
  grants: RunGrants,
  { search, mcp }: RunSettings,
  memory: LongTermMemory | undefined,
  say: (message: string) => void,
): Promise<GoalResources> {
  const media = mediaFor(world.endpoints.chatbot);
  const goalLoop = {
    workspace: state.workspace,
    ...(grants.allow && { allow: grants.allow }),
    ...(grants.yes && { yes: true }),
  };
  const subAgents = subAgentsOf({ ...world, goalLoop, folder: state.workspace, ...(mcp && { mcp }) }, 0);
  try {
    const opened = await openGoalResources({
      workspace: state.workspace,
      models: world.models,
      events: world.events,
      ...(subAgents && { subAgents }),
      ...(memory && { memory }),
      ...(search && { search }),
      ...(media && { media }),
      ...(grants.allowWeb && { allowWeb: grants.allowWeb }),
      ...(grants.allowPrivateNetwork && { allowPrivateNetwork: true }),
      ...(grants.shell && { shell: grants.shell }),
      ...(state.agents !== undefined && { agents: state.agents }),
      ...(mcp && { mcp, onNotice: say }),
    });
    return mcp ? { ...opened, dispose: () => (opened.dispose(), void mcp.close()) } : opened;
  } catch (error) {
    void mcp?.close();
    throw new InvalidFileError(
      `cannot open the run's workspace ${state.workspace}: ${(error as Error).message}`,
    );
  }
}
