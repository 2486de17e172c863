/**
 * Flows lent to an autogram: a `flow` node, or code calling `flows.run({ file, inputs })`, runs one pass
 * of a flow file and gets back its outputs. The engine reaches it only through the host door
 * (InterpreterOptions.host), as it reaches the goal loop.
 *
 * A graph may be shared and untrusted, so the flow file it names must lie in the graph's own folder (or
 * below it): a graph cannot make the run read any other file of the machine.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import type { HostNamespace } from '../engine/interpreter.js';
import { UserError } from '../errors.js';
import type { EventBus } from '../events.js';
import type { LanguageModel } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import type { FlowFile, Json } from './schema.js';

export interface FlowHostOptions {
  /** The folder of the graph file: flow files are found from it, and only inside it. */
  folder: string;
  /** The interpreter's chatbot, metered: the flow's calls are counted with the conversation's. */
  model: LanguageModel;
  /** The interpreter's bus: the pass's `flow.*` events reach the same consumers. */
  events: EventBus;
  /** The user's MCP servers, for the flow's tool nodes. */
  mcp?: McpServers;
  /**
   * The models a flow's nodes name, resolved as `flow run` resolves them and metered like the chatbot;
   * none: a node that names a model fails, saying so.
   */
  nodeModels?: (flow: FlowFile) => Promise<ReadonlyMap<string, LanguageModel>>;
}

/** What a pass gives the graph: stored in the node's variable, plain data. */
export interface NestedFlowResult {
  /** Every node has an output. */
  complete: boolean;
  /** Each node's output (done or reused), by name. */
  outputs: Record<string, Json>;
  /** Why each node that has no output failed or was skipped. */
  failed: Record<string, string>;
}

const requestSchema = z.strictObject({
  file: z.string().trim().min(1),
  inputs: z.record(z.string(), z.string()).default({}),
});

const USAGE = 'flows.run({ file: "NAME.flow.json", inputs?: { name: "text" } })';

/** The `flows` namespace: `run({ file, inputs? })` runs a pass to its end and returns a NestedFlowResult. */
export function flowHost(options: FlowHostOptions): HostNamespace {
  return { awaited: true, functions: { run: (request: unknown) => runNested(options, request) } };
}

async function runNested(options: FlowHostOptions, request: unknown): Promise<NestedFlowResult> {
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new UserError(`flows.run: ${where}${issue?.message ?? 'unexpected arguments'}`, 1, `call ${USAGE}`);
  }
  // Loaded when a graph first runs a flow: most conversations never do.
  const [{ isFlowPath, openFlow }, { newFlowRunState }, { runFlowPass }] = await Promise.all([
    import('./load.js'),
    import('./run-state.js'),
    import('./runner.js'),
  ]);
  if (!isFlowPath(parsed.data.file))
    throw new UserError(
      `flows.run: "${parsed.data.file}" is not a flow file`,
      2,
      'flow files end in .flow.json',
    );
  const { flow } = await openFlow(await flowInside(options.folder, parsed.data.file), parsed.data.file);
  const report = await runFlowPass(
    {
      flow,
      state: newFlowRunState(flow),
      model: options.model,
      // Resolving models may ask servers which they have: only for a flow whose nodes name some.
      ...(options.nodeModels &&
        flow.nodes.some((node) => node.model !== undefined) && {
          nodeModels: await options.nodeModels(flow),
        }),
      events: options.events,
      ...(options.mcp && { mcp: options.mcp }),
    },
    parsed.data.inputs,
  );
  const failed: Record<string, string> = {};
  for (const [name, result] of Object.entries(report.results))
    if (result.status === 'failed' || result.status === 'blocked')
      failed[name] = result.detail ?? result.status;
  return { complete: report.complete, outputs: report.outputs, failed };
}

/** The real path of `file` (relative to `folder`), refused unless it is a flow file inside `folder`. */
async function flowInside(folder: string, file: string): Promise<string> {
  const root = await realpath(folder);
  let real: string;
  try {
    real = await realpath(resolve(root, file));
  } catch {
    throw new UserError(`flows.run: ${file}: no such file next to the graph`, 2, `looked in ${root}`);
  }
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel))
    throw new UserError(
      `flows.run: ${file} is outside the graph's folder`,
      2,
      'a graph may run only flow files in its own folder or below it',
    );
  return real;
}
