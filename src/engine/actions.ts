/**
 * The action registry: one handler per node action, as AutoGRAMS has one node class per action
 * (autograms/nodes/*.py). A handler runs the node's instruction through the effects the interpreter lends
 * it (model, sandbox) and says what the node produced; the interpreter's loop does everything else
 * (assignment, transitions).
 */
import { parseTemplate } from '../aipl/parse.js';
import { escapeAipl } from '../aipl/render.js';
import { UserError } from '../errors.js';
import type { Action } from '../graph/schema.js';
import {
  goalLines,
  MAX_GOALS,
  parseFlowCall,
  parseFunctionCall,
  type CompiledNode,
  type FunctionCall,
} from '../graph/parse.js';
import type { GraphView } from '../graph/view.js';
import { pushFrame, variablesInScope } from './frames.js';
import { endWithRequired } from './reply-text.js';
import type { ConversationState, Turn } from './state.js';
import { topFrame } from './state.js';
import { embedInCode, mentionsVariable, renderText, valueTextFor, type Rendered } from './template.js';
import { findCallable } from './transitions.js';

/** What a handler may use. Effects go through these functions so the loop can record and emit them. */
export interface ActionContext {
  graph: GraphView;
  node: CompiledNode;
  /** The run's working state; handlers change it only through the helpers below and memory.ts. */
  state: ConversationState;
  /** The step at which the node was entered before this visit; absent on its first. */
  previousEntry?: number;
  /** Asks the chatbot, with the prompt formed for this node and `instruction`; returns its reply. */
  generate(instruction: string): Promise<string>;
  /** Runs JavaScript in the sandbox over the variables in scope, storing changed variables; returns its value. */
  runCode(code: string): Promise<unknown>;
  /** Evaluates a JavaScript expression over the variables in scope. */
  evaluate(expression: string): Promise<unknown>;
  /**
   * A host function the layers above lend this run (InterpreterOptions.host, the door code nodes call
   * through too), or undefined when nothing lends `namespace.fn`. Its result is a copy, plain data.
   */
  hostFunction(namespace: string, fn: string): HostCall | undefined;
  /**
   * Renders an AIPL template (after its model-update phase); present when the graph's config.aipl is
   * set, and then prose instructions go through it.
   */
  aipl?: (source: string) => Promise<string>;
}

/** A lent host function as a handler calls it. */
export type HostCall = (...args: unknown[]) => Promise<unknown>;

/**
 * The namespace a `goal_loop` node runs its goals through: `goals.run({ goals, node, maxSteps? })`,
 * lent by `meta-agent chat`, `call` and `simulate` (src/autonomous/nested-run.ts), and to code nodes
 * under the same name.
 */
export const GOALS_NAMESPACE = 'goals';

/**
 * The namespace of long-term memory (`memory.add`, `memory.search`), lent to code nodes by `chat`, `call`
 * and `simulate` when the graph's `config.memory` asks for it (src/autonomous/memory.ts).
 */
export const MEMORY_NAMESPACE = 'memory';

/**
 * The namespace a `flow` node runs its flow through: `flows.run({ file, inputs })`, lent by `meta-agent
 * chat`, `call` and `simulate` (src/flow/nested.ts), and to code nodes under the same name.
 */
export const FLOWS_NAMESPACE = 'flows';

/**
 * The namespace of the user's MCP tools (`mcp.call`, `mcp.tools`), lent to code nodes when MCP servers
 * are configured (src/agent/mcp-host.ts).
 */
export const MCP_NAMESPACE = 'mcp';

/** What running a node produced. */
export interface ActionResult {
  /** The node's output: stored in its `x = …` variable, and what a bare `return` after it returns. */
  output: unknown;
  /** Text for the user: the run pauses here until the user replies. */
  reply?: string;
  /** A function call: the callee's frame is pushed and the run goes on at this node. */
  call?: string;
  /**
   * The loop must not store the output in the node's `x = …` variable: code stores its own (as
   * JavaScript), and a skipped call leaves it as it was.
   */
  keepsVariable?: true;
}

export type ActionHandler = (ctx: ActionContext) => Promise<ActionResult>;

/**
 * How AutoGRAMS shows the model a node whose text it did not write, or whose text it must end with
 * (CHAT_EXACT_INST_CONVERSION, THOUGHT_EXACT_INST_CONVERSION, CHAT_SUFFIX_INST_CONVERSION in
 * autograms/autogram_config.py).
 */
const CONVERSIONS = {
  chat_exact: (text: string) => `Reply to the user with the following text: ${text}`,
  thought_exact: (text: string) => `Reply with this exact text: ${text}`,
  chat_suffix: (text: string) =>
    `Respond to the user's last reply, and then include the **bold** text at the end of your response to direct the conversation:**${text}**. It is also okay for the whole response to be the bold text if it fits the situation.`,
};

/** The node's instruction (without its assignment) with `$var`s and conditional text embedded. */
function instructionOf(ctx: ActionContext): Rendered {
  const where = { node: ctx.node.name, field: 'instruction' };
  return renderText(ctx.node.body, variablesInScope(ctx.state), where, valueTextFor(ctx.graph.config));
}

/**
 * The instruction of a node whose text the model or the user reads. In an AIPL graph it is a template:
 * `$var`s are embedded escaped (so a value is never read as AIPL), then it is rendered.
 */
async function proseOf(ctx: ActionContext): Promise<Rendered> {
  if (!ctx.aipl) return instructionOf(ctx);
  const rendered = aiplSourceOf(ctx);
  return { ...rendered, text: await ctx.aipl(rendered.text) };
}

/** The instruction as AIPL source: `$var`s embedded, escaped. */
function aiplSourceOf(ctx: ActionContext): Rendered {
  const where = { node: ctx.node.name, field: 'instruction' };
  const valueText = valueTextFor(ctx.graph.config);
  return renderText(ctx.node.body, variablesInScope(ctx.state), where, (value) =>
    escapeAipl(valueText(value)),
  );
}

/** Records a chat or thought turn; it consumes the pending user reply, which now belongs to this turn. */
function recordTurn(
  ctx: ActionContext,
  turn: Pick<Turn, 'kind' | 'instruction' | 'output' | 'retain'>,
): void {
  topFrame(ctx.state).turns.push({ node: ctx.node.name, userReply: ctx.state.pendingUser, ...turn });
  ctx.state.pendingUser = '';
}

/**
 * A chat node's instruction stays in later prompts when no user reply came just before it, or when its
 * conditional text was shown (AutoGRAMS keeps instructions "that contain variables",
 * autograms/nodes/chat_nodes.py); otherwise only the user's reply does, to keep prompts short.
 */
function chatRetains(ctx: ActionContext, rendered: Rendered): boolean {
  return ctx.state.pendingUser === '' || rendered.shownConditional;
}

async function chat(ctx: ActionContext): Promise<ActionResult> {
  const rendered = await proseOf(ctx);
  const retain = chatRetains(ctx, rendered);
  const output = await ctx.generate(rendered.text);
  recordTurn(ctx, { kind: 'chat', instruction: rendered.text, output, retain });
  return { output, reply: output };
}

/** A chat reply that ends with the node's text word for word, the model's words leading into it. */
async function chatSuffix(ctx: ActionContext): Promise<ActionResult> {
  const rendered = await proseOf(ctx);
  const retain = chatRetains(ctx, rendered);
  const instruction = CONVERSIONS.chat_suffix(rendered.text);
  const output = endWithRequired(await ctx.generate(instruction), rendered.text);
  recordTurn(ctx, { kind: 'chat', instruction, output, retain });
  return { output, reply: output };
}

/** The exact text is the reply; later prompts never show its instruction (autograms/nodes/chat_nodes.py). */
async function chatExact(ctx: ActionContext): Promise<ActionResult> {
  const { text } = await proseOf(ctx);
  recordTurn(ctx, { kind: 'chat', instruction: CONVERSIONS.chat_exact(text), output: text, retain: false });
  return { output: text, reply: text };
}

async function thought(ctx: ActionContext): Promise<{ instruction: string; output: string }> {
  const instruction = (await proseOf(ctx)).text;
  const output = await ctx.generate(instruction);
  recordTurn(ctx, { kind: 'thought', instruction, output, retain: true });
  return { instruction, output };
}

async function thoughtExact(ctx: ActionContext): Promise<ActionResult> {
  const { text } = await proseOf(ctx);
  recordTurn(ctx, {
    kind: 'thought',
    instruction: CONVERSIONS.thought_exact(text),
    output: text,
    retain: true,
  });
  return { output: text };
}

/**
 * Evaluates the call's arguments in the caller's scope, pushes the callee's frame and goes to the callee.
 * With `requiredRevisit`, the call is skipped (its variable keeps its value and the node's own transitions
 * are taken) until each of those nodes has run again since this one last did.
 */
async function call(ctx: ActionContext, scope: 'function' | 'local_function' | 'global_function') {
  const { node, graph, state } = ctx;
  if (!revisited(ctx)) return { output: undefined, keepsVariable: true } satisfies ActionResult;
  const spec = callOf(ctx);
  const callee = findCallable(graph, node, spec.fn);
  const params = callee.callable!.params;
  if (params.length !== spec.args.length)
    throw new UserError(
      `node "${node.name}" calls ${callee.name} with ${spec.args.length} argument(s); it takes ${params.length}`,
    );
  const args: Record<string, unknown> = {};
  for (const [i, expression] of spec.args.entries()) args[params[i]!] = await ctx.evaluate(expression);
  pushFrame(state, {
    scope,
    args,
    caller: node.name,
    assignTo: node.assignTo,
    defaults: { prompt: graph.config.prompt, userPrompt: graph.config.userPrompt },
  });
  return { output: undefined, call: callee.name } satisfies ActionResult;
}

/**
 * The call a function node makes. `$var`s in it are embedded first and the call read again, as AutoGRAMS
 * does (autograms/nodes/function_nodes.py): `y = f($x)` passes the text of x as the argument's code.
 */
function callOf(ctx: ActionContext): FunctionCall {
  const { node } = ctx;
  const fail = (text: string) =>
    new UserError(
      `node "${node.name}": a ${node.action} node's instruction must be a call like "y = f(x)", got "${text}"`,
    );
  if (!mentionsVariable(node.body)) {
    if (!node.call) throw fail(node.instruction);
    return node.call;
  }
  // The arguments are code: a value is pasted in as the node's language writes it.
  const where = { node: node.name, field: 'instruction' };
  const valueText = valueTextFor(ctx.graph.config, node);
  const text = renderText(node.body, variablesInScope(ctx.state), where, valueText).text;
  const parsed = parseFunctionCall(text);
  if (!parsed) throw fail(text);
  return parsed;
}

/**
 * True unless `node` lists `requiredRevisit` nodes and one of them has not run since the node's previous
 * visit (on its first visit: has not run at all), which is AutoGRAMS' documented rule for
 * `required_revisit` (its `check_node_req` reads its history backwards and checks less).
 */
function revisited({ node, state, previousEntry = 0 }: ActionContext): boolean {
  const required = node.requiredRevisit ?? [];
  return required.every((name) => name !== node.name && (state.lastEntered[name] ?? 0) > previousEntry);
}

/**
 * Sets or appends to one of the frame's prompts; the node's output is the new prompt. In an AIPL graph the
 * chatbot's prompt is kept as a template, rendered whenever the chatbot is asked.
 */
function prompt(ctx: ActionContext, which: 'prompt' | 'userPrompt', mode: 'set' | 'append'): ActionResult {
  const frame = topFrame(ctx.state);
  const template = which === 'prompt' && ctx.graph.config.aipl !== undefined;
  const { text } = template ? aiplSourceOf(ctx) : instructionOf(ctx);
  if (template) parseTemplate(text, `node "${ctx.node.name}" instruction`);
  frame[which] = mode === 'set' || !frame[which] ? text : `${frame[which]}\n${text}`;
  return { output: frame[which] };
}

/**
 * An autonomous goal-loop run: the instruction's lines, with variables embedded, are its goals (at most
 * MAX_GOALS); what the run returns (its reason, detail, steps and whether it completed) is the output.
 * The engine does not run the loop itself: it asks the host, through the door code nodes use.
 */
async function goalLoop(ctx: ActionContext): Promise<ActionResult> {
  const goals = goalLines(instructionOf(ctx).text);
  if (goals.length === 0)
    throw new UserError(
      'a goal_loop node has no goals: its instruction came out blank',
      1,
      'write one goal per line; a $var in it must hold text',
    );
  if (goals.length > MAX_GOALS)
    throw new UserError(
      `a goal_loop node has ${goals.length} goals (one per line); a goal-loop run takes at most ${MAX_GOALS}`,
      1,
      'merge some lines, or split the goals over two goal_loop nodes',
    );
  const run = ctx.hostFunction(GOALS_NAMESPACE, 'run');
  if (!run)
    throw new UserError(
      'a goal_loop node needs the goal loop, and nothing lends it to this run',
      2,
      `run the graph with meta-agent chat, call or simulate, which lend it as ${GOALS_NAMESPACE}.run`,
    );
  return { output: await run({ goals, node: ctx.node.name }) };
}

/**
 * One pass of an AgentKit flow: the instruction's first line (variables embedded) is the flow file, the
 * others its inputs; what the pass returns (its outputs, what failed, whether it completed) is the
 * output. The engine asks the host, as for goal_loop.
 */
async function flowNode(ctx: ActionContext): Promise<ActionResult> {
  const call = parseFlowCall(instructionOf(ctx).text);
  if ('problem' in call) throw new UserError(`node "${ctx.node.name}": ${call.problem}`);
  const run = ctx.hostFunction(FLOWS_NAMESPACE, 'run');
  if (!run)
    throw new UserError(
      'a flow node needs flows, and nothing lends them to this run',
      2,
      `run the graph with meta-agent chat, call or simulate, which lend them as ${FLOWS_NAMESPACE}.run`,
    );
  return { output: await run(call) };
}

/** One handler per action. */
export const ACTION_HANDLERS: Record<Action, ActionHandler> = {
  chat,
  chat_exact: chatExact,
  chat_suffix: chatSuffix,
  thought: async (ctx) => ({ output: (await thought(ctx)).output }),
  thought_exact: thoughtExact,
  // The question and the answer together, to keep both in one variable (autograms/nodes/thought_nodes.py).
  thought_qa: async (ctx) => {
    const { instruction, output } = await thought(ctx);
    return { output: `${instruction}\n\n${output}` };
  },
  // The instruction is JavaScript as written: `x = …` is a JavaScript assignment, so x receives the
  // value, and statements after it run too. The output is the completion value of the code. `$var`s are
  // embedded as text first, as AutoGRAMS does in a python_function.
  code: async (ctx) => {
    const valueText = valueTextFor(ctx.graph.config, ctx.node);
    const code = embedInCode(ctx.node.instruction, variablesInScope(ctx.state), valueText);
    return { output: await ctx.runCode(code), keepsVariable: true };
  },
  function: (ctx) => call(ctx, 'function'),
  local_function: (ctx) => call(ctx, 'local_function'),
  global_function: (ctx) => call(ctx, 'global_function'),
  set_prompt: async (ctx) => prompt(ctx, 'prompt', 'set'),
  append_prompt: async (ctx) => prompt(ctx, 'prompt', 'append'),
  set_user_prompt: async (ctx) => prompt(ctx, 'userPrompt', 'set'),
  append_user_prompt: async (ctx) => prompt(ctx, 'userPrompt', 'append'),
  // A branching point only: the previous node's output passes through, so `return` after it still works.
  transition: async (ctx) => ({ output: topFrame(ctx.state).lastOutput }),
  goal_loop: goalLoop,
  flow: flowNode,
};
