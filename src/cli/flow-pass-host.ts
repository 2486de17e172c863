/**
 * What a process that carries durable flow passes (durable/flow-pass.ts) lends them: the store the runs
 * are kept in, and the models, made from the model options each pass was started with (flow run's
 * flags, never a key) and the flow's own config, as `flow run` makes them.
 */
import type { FlowPassHost } from '../durable/flow-pass.js';
import type { Store } from '../store/store.js';
import { modelsFromOptions } from './model-options.js';
import type { ModelOptionValues } from './options.js';

export function flowPassHost(store: Store): FlowPassHost {
  return {
    flowRuns: store.flowRuns,
    models: async ({ models, flow }) =>
      (await modelsFromOptions(models as ModelOptionValues, { chatbot: flow.config.models.chatbot })).models,
  };
}
