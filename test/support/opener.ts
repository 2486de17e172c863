/**
 * Agents opened the way the product opens them (src/agent/open.ts), for tests that need an opener or
 * sub-agents without a command line: on an in-memory store, so nothing they save lands on disk.
 */
import { agentOpener, subAgentsOf, type AgentWorld } from '../../src/agent/open.js';
import type { AgentOpener } from '../../src/engine/agent-opener.js';
import { EventBus } from '../../src/events.js';
import type { ModelSet } from '../../src/llm/types.js';
import { inMemoryStore } from '../../src/store/in-memory.js';
import type { AgentDesigner } from '../../tools/sub-agents.js';
import type { WorkspaceFiles } from '../../tools/command.js';

function worldOf(models: ModelSet, folder: string, events = new EventBus()): AgentWorld {
  return { models, events, store: inMemoryStore(), folder };
}

/** An opener of agents on `models` whose flows are read from `folder`. */
export function testOpener(models: ModelSet, folder: string, events?: EventBus): AgentOpener {
  return agentOpener(worldOf(models, folder, events));
}

/** What a goal run's sub-agents in `workspace` are opened and designed with. */
export function subAgentOptions(
  workspace: WorkspaceFiles,
  models: ModelSet,
  events?: EventBus,
): { workspace: WorkspaceFiles; open: AgentOpener; design: AgentDesigner } {
  const lent = subAgentsOf(worldOf(models, workspace.root, events), 0)!(workspace.root);
  return { workspace, open: lent.open, design: lent.design! };
}
