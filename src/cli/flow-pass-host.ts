/**
 * What a process that carries durable flow passes (durable/flow-pass.ts) lends them: the store the runs
 * are kept in, and the models, made from the model options each pass was started with (flow run's
 * flags, never a key) and the flow's own config, as `flow run` makes them; and the MCP servers of the
 * process (its own --mcp-config), which the passes' tool nodes call.
 */
import type { FlowPassHost } from '../durable/flow-pass.js';
import type { McpServers } from '../mcp/servers.js';
import type { Store } from '../store/store.js';
import { modelsFromOptions } from './model-options.js';
import type { ModelOptionValues } from './options.js';

export function flowPassHost(store: Store, mcp?: McpServers): FlowPassHost {
  return {
    flowRuns: store.flowRuns,
    ...(mcp && { mcp }),
    models: async ({ models, flow }) =>
      (await modelsFromOptions(models as ModelOptionValues, { chatbot: flow.config.models.chatbot })).models,
  };
}
