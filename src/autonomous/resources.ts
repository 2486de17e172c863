/**
 * What a goal-loop run works with, assembled once for every way a run starts (`meta-agent run`, and a
 * `goal_loop` node of an autogram): the workspace jail, the sandbox for execute_javascript, sub-agents,
 * browsing when allowed, web search and the model server's media endpoints when there are some, command
 * lines when the user turned them on, memory when there is one and the user's MCP servers when they have
 * some; then the commands those make possible.
 */
import type { EventBus } from '../events.js';
import type { ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { Command } from '../../tools/command.js';
import type { CommandResources, LongTermMemory, MediaEndpoints, WebSearch } from '../../tools/command.js';
import { commandRegistry } from '../../tools/index.js';
import { mcpCommands } from '../../tools/mcp-commands.js';
import { CommandRegistry } from '../../tools/registry.js';
import { GitCloner } from '../../tools/git-clone.js';
import { WorkspacePython } from '../../tools/python-files.js';
import { SandboxCodeRunner } from '../../tools/sandbox-code.js';
import { ShellSandbox, type ShellContainment } from '../../tools/shell-sandbox.js';
import { AutogramAgents, type SubAgentsLent } from '../../tools/sub-agents.js';
import { PolicedWeb } from '../../tools/web.js';
import { Workspace } from '../../tools/workspace.js';
import { sandboxCeiling } from '../sandbox/limits.js';
import type { PythonRuntime } from '../sandbox/index.js';
import { userConfigDir } from './consent.js';

export interface ResourceOptions {
  /** The workspace folder (created when missing). */
  workspace: string;
  /** Metered models: sub-agents and browse summaries are spent like the run's own calls. */
  models: ModelSet;
  events: EventBus;
  /** Hosts browse_website may fetch; none: the command is not offered. */
  allowWeb?: string[];
  allowPrivateNetwork?: boolean;
  /** The search provider the user configured; none: `google` is not offered. */
  search?: WebSearch;
  /** The model server's images and transcription endpoints; none: their commands are not offered. */
  media?: MediaEndpoints;
  /** How execute_shell's command lines are contained, when the user turned it on; none: not offered. */
  shell?: ShellGrant;
  memory?: LongTermMemory;
  /** How sub-agents are opened and designed (src/agent lends it); none: the run offers no sub-agents. */
  subAgents?: SubAgentsLent;
  /** A saved sub-agents snapshot to bring back (a resumed run's). */
  agents?: unknown;
  /** The user's MCP servers: each is started, and its tools offered as `mcp__SERVER__TOOL` commands. */
  mcp?: McpServers;
  /** Told what the run goes without: an MCP server that did not start, a tool that cannot be offered. */
  onNotice?: (message: string) => void;
  /** The runtime execute_python_file's programs run in; default: the process's. */
  python?: PythonRuntime;
}

/** execute_shell as the user turned it on: how its command lines are contained, and how long they may run. */
export interface ShellGrant {
  containment: ShellContainment;
  timeoutMs?: number;
}

/** A run's resources and the commands they make possible. Dispose when the run is over. */
export interface GoalResources {
  workspace: Workspace;
  agents?: AutogramAgents;
  resources: Partial<CommandResources>;
  registry: CommandRegistry;
  /** The prompt's Resources section. */
  lines: string[];
  dispose(): void;
}

/** Opens the resources of a run. A workspace that cannot be used or a snapshot that cannot be restored throws. */
export async function openGoalResources(options: ResourceOptions): Promise<GoalResources> {
  // The user's configuration holds their allow rules and consent key: never the agent's to read or write.
  const workspace = await Workspace.open(options.workspace, { offLimits: [userConfigDir()] });
  const lent = options.subAgents?.(workspace.root);
  const agentOptions = lent && { workspace, ...lent };
  const agents =
    agentOptions &&
    (options.agents === undefined
      ? new AutogramAgents(agentOptions)
      : await AutogramAgents.restore(options.agents, agentOptions));
  const code = await SandboxCodeRunner.create();
  const { chatbot } = options.models;
  // A program is a whole task, not one evaluation: it gets the most sandboxed code may have.
  const ceiling = sandboxCeiling();
  const resources: Partial<CommandResources> = {
    workspace,
    code,
    python: new WorkspacePython(workspace, ceiling.timeoutMs, ceiling.memoryMb, options.python),
    ...(agents && { agents }),
    ask: async (prompt, purpose, signal) =>
      (await chatbot.complete({ messages: [{ role: 'user', content: prompt }], purpose, signal })).text,
    ...(options.allowWeb?.length && {
      web: new PolicedWeb({
        allowHosts: options.allowWeb,
        allowPrivate: options.allowPrivateNetwork ?? false,
      }),
    }),
    ...(options.search && { search: options.search }),
    ...(options.media && { media: options.media }),
    ...(options.memory && { memory: options.memory }),
    git: new GitCloner({ root: workspace.root, allowPrivate: options.allowPrivateNetwork ?? false }),
    ...(options.shell && {
      shell: new ShellSandbox(workspace.root, options.shell.containment, {
        ...(options.shell.timeoutMs !== undefined && { timeoutMs: options.shell.timeoutMs }),
      }),
    }),
  };
  const mcp = options.mcp && (await mcpCommandsOf(options.mcp, options.onNotice ?? (() => undefined)));
  const lines = [
    'File input and output in your workspace folder.',
    'JavaScript evaluation in a sandbox (no files, network or environment).',
    'Python programs of your workspace run in a sandbox (no network; their file changes are copied back to the workspace).',
    'Public git repositories cloned into your workspace folder.',
    ...(resources.search ? [`Internet access for searches (${resources.search.provider}).`] : []),
    ...(resources.web ? [`Web pages from: ${options.allowWeb!.join(', ')}.`] : []),
    ...(resources.media ? ['Image generation and audio transcription through the model server.'] : []),
    ...(options.shell
      ? [
          options.shell.containment.kind === 'bubblewrap'
            ? 'Shell commands in your workspace folder (no network, no files outside it).'
            : 'Shell commands in your workspace folder.',
        ]
      : []),
    ...(agents
      ? ['Agents (autograms) for delegation: from graph files in your workspace, or designed for a task.']
      : []),
    ...(resources.memory ? ['Long Term memory management.'] : []),
    ...(mcp?.servers.length ? [`Tools of the MCP servers ${mcp.servers.join(', ')} (commands mcp__…).`] : []),
  ];
  return {
    workspace,
    ...(agents && { agents }),
    resources,
    registry: new CommandRegistry([...commandRegistry().offered(resources).all(), ...(mcp?.commands ?? [])]),
    lines,
    dispose: () => {
      agents?.dispose();
      code.dispose();
    },
  };
}

/**
 * The commands of every tool of `servers`, each server started in parallel; one that does not start is
 * told to `notice` with its reason, and the run goes on without its tools.
 */
async function mcpCommandsOf(
  servers: McpServers,
  notice: (message: string) => void,
): Promise<{ commands: Command[]; servers: string[] }> {
  const { tools, failed } = await servers.allTools();
  for (const { reason } of failed) notice(`${reason}; the run goes on without its tools`);
  const started = servers.names().filter((name) => !failed.some(({ server }) => server === name));
  return { commands: mcpCommands(servers, tools, notice), servers: started };
}
