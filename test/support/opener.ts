/**
 * Sub-agents opened the way the product opens them (src/agent/open.ts), for tests without a command
 * line: on an in-memory store, so nothing they save lands on disk.
 */
import { subAgentsOf, type AgentWorld } from '../../src/agent/open.js';
import type { AgentOpener } from '../../src/engine/agent-opener.js';
import { EventBus } from '../../src/events.js';
import type { ModelSet } from '../../src/llm/types.js';
import { inMemoryStore } from '../../src/store/in-memory.js';
import type { AgentDesigner } from '../../tools/sub-agents.js';
import type { WorkspaceFiles } from '../../tools/command.js';

function worldOf(models: ModelSet, folder: string, events = new EventBus()): AgentWorld {
  return { models, events, store: inMemoryStore(), folder };
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
