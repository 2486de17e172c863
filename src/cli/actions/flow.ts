/** What `meta-agent flow run` does (declared in ../commands/flow.ts). */
import { randomBytes } from 'node:crypto';
import { UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import { openFlow } from '../../flow/load.js';
import { checkToolServers } from '../../flow/pass-plan.js';
import { newFlowRunState } from '../../flow/run-state.js';
import type { FlowFile } from '../../flow/schema.js';
import { runFlowPass, type PassReport } from '../../flow/runner.js';
import { unavailableModels } from '../../llm/unavailable.js';
import { UsageMeter } from '../../llm/usage.js';
import { printEvents } from '../chat-lines.js';
import { flowAnswers, flowSummary, printFlowLines } from '../flow-lines.js';
import { stopOnCtrlC } from '../interrupt.js';
import { formatFinding } from '../load-graph.js';
import { flowModels, type FlowModels } from '../flow-models.js';
import { hasModelFlags } from '../model-options.js';
import type { McpServers } from '../../mcp/servers.js';
import { mcpServersFor, type McpOptionValues } from '../mcp-setup.js';
import type { ModelOptionValues } from '../options.js';
import { shownPath as shown, writeErr, writeOut } from '../terminal.js';
import { openStore, type OpenedStore } from '../store-for.js';
import { traceTo } from '../trace-option.js';

/** `flow run`'s options as commander parses them. */
export interface FlowRunOptions extends ModelOptionValues, McpOptionValues {
  input: Record<string, string>;
  concurrency?: number;
  contextTokens?: number;
  state?: string;
  json?: boolean;
  trace?: string;
  tui: boolean;
  database?: string;
}

/** Runs one pass of the flow at `path` and prints its answers. */
export async function runFlow(path: string, options: FlowRunOptions): Promise<void> {
  const { flow, warnings } = await openFlow(path);
  for (const warning of warnings) writeErr(`warning: ${formatFinding(warning, '(flow)')}\n`);
  const mcp = await mcpServersFor(options);
  try {
    checkToolServers(flow, mcp?.names());
    const opened = await openStore(options.database);
    try {
      await runPass(path, flow, opened, options, mcp);
    } finally {
      await opened.close();
    }
  } finally {
    await mcp?.close();
  }
}

/**
 * Runs the pass of `flow` kept (with --state) in `opened`, prints what it answered and sets the exit
 * code. In a database, the pass is a durable workflow (../durable-pass.ts), kept under --state or a
 * key of its own, so a crash never loses it.
 */
async function runPass(
  path: string,
  flow: FlowFile,
  opened: OpenedStore,
  options: FlowRunOptions,
  mcp: McpServers | undefined,
): Promise<void> {
  const { flowRuns } = opened.store;
  // A pass in a database always has a key: its workflow's id is made of it.
  const key = options.state ?? `${flow.name}-${randomBytes(4).toString('hex')}`;
  const saved = options.state === undefined ? undefined : await flowRuns.load(options.state, flow);
  const state = saved ?? newFlowRunState(flow);
  const bus = new EventBus();
  const meter = new UsageMeter(bus);
  const { models, nodeModels } = await modelsOf(flow, options);
  const model = meter.meter(models).chatbot;
  if (model.answersFrom === 'rules')
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const interactive =
    options.tui && !options.json && process.stdout.isTTY === true && process.stderr.isTTY === true;
  const stopTrace = options.trace === undefined ? undefined : traceTo(bus, options.trace);
  const stopPrinting = options.json
    ? printEvents(bus, (line) => writeOut(line))
    : interactive
      ? undefined
      : printFlowLines(bus, (line) => writeErr(line));
  const ui = interactive
    ? (await import('../../tui/flow/index.js')).renderFlowUI({
        bus,
        flow: flow.name,
        model: model.modelName,
        scripted: model.answersFrom === 'rules',
        attempts: flow.config.attempts,
        state,
        ...(options.state !== undefined && { savedTo: shown(options.state) }),
      })
    : undefined;
  // Ctrl+C stops the pass (saved at its last step); a second press exits at once. The handler stays until
  // the process ends, so a press while the view unmounts still exits 130.
  const { signal: stop } = stopOnCtrlC({ afterStop: 'exit' });
  let report: PassReport;
  try {
    report = opened.db
      ? await (
          await import('../durable-pass.js')
        ).runDurablePass({
          flow,
          key,
          saved,
          inputs: options.input,
          ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
          ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
          models: options,
          db: opened.db,
          database: options.database,
          events: bus,
          stop,
          ...(mcp && { mcp }),
          again: `meta-agent flow run ${shown(path)} --state ${key}${options.database === undefined ? '' : ' --database URL'}`,
        })
      : await runFlowPass(
          {
            flow,
            state,
            model,
            nodeModels: meter.meterEach(nodeModels),
            events: bus,
            ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
            ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
            ...(options.state !== undefined && { keptAt: { store: flowRuns, key: options.state } }),
            signal: stop,
            ...(mcp && { mcp }),
          },
          options.input,
        );
  } finally {
    await ui?.finish();
    ui?.unmount();
    stopPrinting?.();
    stopTrace?.();
  }
  if (options.json) writeOut(`${JSON.stringify({ type: 'flow.report', ...report })}\n`);
  else {
    writeOut(flowAnswers(report));
    writeErr(`${flowSummary(report)}\n`);
    for (const [name, result] of Object.entries(report.results))
      if (result.status === 'failed') writeErr(`[flow] ${name} failed: ${result.detail ?? ''}\n`);
  }
  if (report.interrupted)
    writeErr(
      options.state === undefined
        ? '[flow] stopped; nothing was saved (pass --state FILE to keep a run)\n'
        : `[flow] stopped; finish the pass with: meta-agent flow run ${shown(path)} --state ${shown(options.state)}\n`,
    );
  process.exitCode = report.interrupted ? 130 : report.complete ? 0 : 1;
}

/**
 * The models the pass asks (flow-models.ts). A flow whose every node is an MCP tool call asks none (a
 * tool node has no after-query step to add a prompt node), so unless a model flag names one, none is
 * looked for.
 */
async function modelsOf(flow: FlowFile, options: FlowRunOptions): Promise<FlowModels> {
  if (flow.nodes.every((node) => node.tool) && !hasModelFlags(options))
    return {
      models: unavailableModels(
        new UserError(`the flow "${flow.name}" asks no model: its nodes call MCP tools`),
      ),
      nodeModels: new Map(),
    };
  return flowModels(flow, options);
}
