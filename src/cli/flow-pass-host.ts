/**
 * What a process that carries durable flow passes (durable/flow-pass.ts) lends them: the store the runs
 * are kept in, and the models, made from the model options each pass was started with (flow run's
 * flags, never a key) and the flow's own config, as `flow run` makes them (its nodes' models too); and the MCP servers of the
 * process (its own --mcp-config), which the passes' tool nodes call.
 */
import type { FlowPassHost } from '../durable/flow-pass.js';
import type { McpServers } from '../mcp/servers.js';
import type { Store } from '../store/store.js';
import { flowModels } from './flow-models.js';
import type { ModelOptionValues } from './options.js';

export function flowPassHost(store: Store, mcp?: McpServers): FlowPassHost {
  return {
    flowRuns: store.flowRuns,
    ...(mcp && { mcp }),
    models: ({ models, flow }) => flowModels(flow, models as ModelOptionValues, false),
  };
}
