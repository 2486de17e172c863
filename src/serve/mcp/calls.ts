/**
 * A tool call run the way the server runs the same work over HTTP: a function on an agent opened as
 * every agent is (src/agent's opener, on the server's store and goal-loop permissions), a message as a
 * turn of a conversation the hub holds (kept, one turn at a time), a flow as a pass of FlowPasses. What
 * happens on the way (a node entered, a flow node settled) is told to `progress`.
 */
import { agentOpener } from '../../agent/open.js';
import { conversationGraph } from '../../engine/self-mode.js';
import { EventBus, type AgentEvent } from '../../events.js';
import { Interrupted, untilAborted } from '../../interrupt.js';
import { UsageMeter } from '../../llm/usage.js';
import type { ServeContext } from '../context.js';
import type { FlowPasses } from '../flow-passes.js';
import { checkedId } from '../request.js';
import type { ServedAgent, ServedFlow } from '../served.js';
import { servedWorld } from '../serve-context.js';
import { turnFailure } from '../turn-failure.js';
import { pythonRuntimeOf } from '../python-runtimes.js';
import { conversationArguments, flowInputs, functionArguments, ToolError } from './arguments.js';
import type { OfferedTool } from './tools.js';

/** What a tool answers: its text, and the same as a value when the tool declares an output schema. */
export interface ToolAnswer {
  text: string[];
  structured?: Record<string, unknown>;
}

/** Told of each step; `total` when the steps are counted ahead (a flow's nodes). */
export type Progress = (progress: number, message: string, total?: number) => void;

export interface CallSetup {
  ctx: ServeContext;
  passes: FlowPasses;
  /** Whose conversations and passes these are: the API key's owner, or `local`. */
  owner: string;
  /** Absent when the client asked for no progress. */
  progress?: Progress;
  /** The client cancelled the call: stop waiting (the work goes on, and is kept). */
  signal: AbortSignal;
}

/** The answer of `tool` to `args`; a ToolError whose message is the one line to tell the client. */
export async function runTool(
  tool: OfferedTool,
  args: Record<string, unknown> | undefined,
  setup: CallSetup,
): Promise<ToolAnswer> {
  const { name, target } = tool;
  try {
    switch (target.kind) {
      case 'function':
        return await callFunction(
          target.agent,
          target.fn,
          functionArguments(name, target.params, args),
          setup,
        );
      case 'conversation': {
        const { message, conversationId } = conversationArguments(name, args);
        return await say(target.agent, message, conversationId, setup);
      }
      case 'flow':
        return await runPass(target.flow, flowInputs(name, target.flow.flow.inputs, args), setup);
    }
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (error instanceof Interrupted) throw new ToolError(`${name}: cancelled; the work goes on and is kept`);
    throw new ToolError(turnFailure(error, setup.ctx).message);
  }
}

async function callFunction(
  agent: ServedAgent,
  fn: string,
  args: unknown[],
  { ctx, owner, progress, signal }: CallSetup,
): Promise<ToolAnswer> {
  const events = new EventBus();
  const models = new UsageMeter(events).meter(agent.models);
  const open = agentOpener({
    ...servedWorld(ctx),
    models,
    events,
    store: ctx.store,
    folder: agent.folder,
    python: pythonRuntimeOf(owner),
  });
  const interpreter = await open({ graph: conversationGraph(agent.file, undefined) });
  const stop = events.on(stepsTo(progress));
  const work = ctx.track(
    interpreter.applyFn(fn, args).finally(() => {
      stop();
      interpreter.dispose();
    }),
  );
  const { value } = await untilAborted(work, signal);
  // A bare `return` gives undefined, which JSON has no word for.
  return { text: [JSON.stringify(value ?? null)] };
}

async function say(
  agent: ServedAgent,
  message: string,
  id: string | undefined,
  { ctx, owner, progress, signal }: CallSetup,
): Promise<ToolAnswer> {
  const conversation =
    id === undefined
      ? await ctx.hub.create(owner, agent.name)
      : await ctx.hub.find(owner, checkedId(id), { current: false });
  if (!conversation)
    throw new ToolError(`there is no conversation ${id}; leave conversation_id out to start a new one`);
  if (conversation.entry.graph !== agent.name)
    throw new ToolError(
      `the conversation ${id} is with the agent "${conversation.entry.graph}", not "${agent.name}"`,
    );
  const stop = conversation.events.on(stepsTo(progress));
  try {
    const result = await untilAborted(ctx.track(conversation.turn(message, { wait: true })), signal);
    const answer = { reply: result.reply, conversation_id: conversation.id, ended: result.ended };
    return {
      text: [
        result.reply,
        result.ended
          ? `(conversation_id: ${conversation.id}; the agent has ended this conversation)`
          : `(conversation_id: ${conversation.id}; send it with the next message to go on)`,
      ],
      structured: answer,
    };
  } finally {
    stop();
  }
}

async function runPass(
  flow: ServedFlow,
  inputs: Record<string, string>,
  { passes, owner, progress, signal }: CallSetup,
): Promise<ToolAnswer> {
  const pass = await passes.start(owner, flow, inputs);
  const total = flow.flow.nodes.length;
  let settled = 0;
  const see = ({ event }: { event: AgentEvent }) => {
    if (event.type !== 'flow.node' || event.status === 'running' || event.status === 'retry') return;
    progress?.(++settled, `${event.node}: ${event.status}`, total);
  };
  // The pass began as it was made: what it did before this listens is in its log.
  for (const entry of pass.log.since(undefined).events) see(entry);
  const stop = pass.log.subscribe(see);
  try {
    await untilAborted(pass.done, signal);
  } finally {
    stop();
  }
  const view = pass.view();
  if (view.status === 'failed') throw new ToolError(`the flow "${flow.name}" failed: ${view.error}`);
  if (!view.complete) {
    const [node, result] =
      Object.entries(view.results).find(
        ([, result]) => result.status !== 'done' && result.status !== 'reused',
      ) ?? [];
    throw new ToolError(
      `the flow "${flow.name}" did not finish${node ? `: the node ${node} ${result!.status}${result!.detail ? ` (${result!.detail})` : ''}` : ''}`,
    );
  }
  const outputs = Object.fromEntries(
    (view.sinks ?? []).map((sink) => [sink, view.results[sink]?.output ?? null]),
  );
  return { text: [JSON.stringify(outputs)], structured: { outputs } };
}

/** Whether progress is worth a notification: at most one a tenth of a second, the first at once. */
const PROGRESS_EVERY_MS = 100;

/** Tells `progress` of the nodes entered, counting them, at most one each PROGRESS_EVERY_MS. */
function stepsTo(progress: Progress | undefined): (event: AgentEvent) => void {
  let steps = 0;
  let told = 0;
  return (event) => {
    if (!progress || event.type !== 'node.entered') return;
    steps++;
    if (Date.now() - told < PROGRESS_EVERY_MS) return;
    told = Date.now();
    progress(steps, `node ${event.node}`);
  };
}
