/**
 * The action registry: one handler per node action, as AutoGRAMS has one node class per action. A
 * handler runs the node's instruction through the effects the interpreter lends it (model, sandbox) and
 * says what the node produced; the interpreter's loop does everything else (assignment, transitions).
 */
import { UserError } from '../errors.js';
import type { Action } from '../graph/schema.js';
import type { CompiledNode } from '../graph/parse.js';
import type { GraphView } from '../graph/view.js';
import { pushFrame, variablesInScope } from './memory.js';
import type { ConversationState, Turn } from './state.js';
import { topFrame } from './state.js';
import { renderTemplate } from './template.js';
import { findCallable } from './transitions.js';

/** What a handler may use. Effects go through these functions so the loop can record and emit them. */
export interface ActionContext {
  graph: GraphView;
  node: CompiledNode;
  /** The run's working state; handlers change it only through the helpers below and memory.ts. */
  state: ConversationState;
  /** Asks the chatbot, with the prompt formed for this node and `instruction`; returns its reply. */
  generate(instruction: string): Promise<string>;
  /** Runs JavaScript in the sandbox over the variables in scope, storing changed variables; returns its value. */
  runCode(code: string): Promise<unknown>;
  /** Evaluates a JavaScript expression over the variables in scope. */
  evaluate(expression: string): Promise<unknown>;
}

/** What running a node produced. */
export interface ActionResult {
  /** The node's output: stored in its `x = …` variable, and what a bare `return` after it returns. */
  output: unknown;
  /** Text for the user: the run pauses here until the user replies. */
  reply?: string;
  /** A function call: the callee's frame is pushed and the run goes on at this node. */
  call?: string;
  /** The instruction stored its own `x = …` (code does, as JavaScript), so the loop must not store the output in x. */
  storedItself?: true;
}

export type ActionHandler = (ctx: ActionContext) => Promise<ActionResult>;

/** The node's instruction (without its assignment) with `$var`s embedded. */
function instructionOf(ctx: ActionContext): string {
  return renderTemplate(ctx.node.body, variablesInScope(ctx.state), {
    node: ctx.node.name,
    field: 'instruction',
  });
}

/** Records a chat or thought turn; it consumes the pending user reply, which now belongs to this turn. */
function recordTurn(ctx: ActionContext, kind: Turn['kind'], instruction: string, output: string): void {
  topFrame(ctx.state).turns.push({
    node: ctx.node.name,
    kind,
    instruction,
    userReply: ctx.state.pendingUser,
    output,
  });
  ctx.state.pendingUser = '';
}

async function generated(ctx: ActionContext, kind: Turn['kind']): Promise<string> {
  const instruction = instructionOf(ctx);
  const output = await ctx.generate(instruction);
  recordTurn(ctx, kind, instruction, output);
  return output;
}

/**
 * An exact node says its text without the model; its turn shows the model an instruction that would have
 * produced it (the AutoGRAMS conversions), so later prompts read as if the model had been asked.
 */
function exact(ctx: ActionContext, kind: Turn['kind']): string {
  const text = instructionOf(ctx);
  const instruction =
    kind === 'chat'
      ? `Reply to the user with the following text: ${text}`
      : `Reply with this exact text: ${text}`;
  recordTurn(ctx, kind, instruction, text);
  return text;
}

/** Evaluates the call's arguments in the caller's scope, pushes the callee's frame and goes to the callee. */
async function call(ctx: ActionContext, scope: 'function' | 'local_function' | 'global_function') {
  const { node, graph, state } = ctx;
  if (!node.call)
    throw new UserError(
      `node "${node.name}": a ${node.action} node's instruction must be a call like "y = f(x)"`,
    );
  const callee = findCallable(graph, node, node.call.fn);
  const params = callee.callable!.params;
  if (params.length !== node.call.args.length)
    throw new UserError(
      `node "${node.name}" calls ${callee.name} with ${node.call.args.length} argument(s); it takes ${params.length}`,
    );
  const args: Record<string, unknown> = {};
  for (const [i, expression] of node.call.args.entries()) args[params[i]!] = await ctx.evaluate(expression);
  pushFrame(state, {
    scope,
    args,
    caller: node.name,
    assignTo: node.assignTo,
    defaults: { prompt: graph.config.prompt, userPrompt: graph.config.userPrompt },
  });
  return { output: undefined, call: callee.name } satisfies ActionResult;
}

/** Sets or appends to one of the frame's prompts; the node's output is the new prompt. */
function prompt(ctx: ActionContext, which: 'prompt' | 'userPrompt', mode: 'set' | 'append'): ActionResult {
  const frame = topFrame(ctx.state);
  const text = instructionOf(ctx);
  frame[which] = mode === 'set' || !frame[which] ? text : `${frame[which]}\n${text}`;
  return { output: frame[which] };
}

/** One handler per action. */
export const ACTION_HANDLERS: Record<Action, ActionHandler> = {
  chat: async (ctx) => {
    const text = await generated(ctx, 'chat');
    return { output: text, reply: text };
  },
  chat_exact: async (ctx) => {
    const text = exact(ctx, 'chat');
    return { output: text, reply: text };
  },
  thought: async (ctx) => ({ output: await generated(ctx, 'thought') }),
  thought_exact: async (ctx) => ({ output: exact(ctx, 'thought') }),
  // The instruction is JavaScript as written: `x = …` is a JavaScript assignment, so x receives the
  // value, and statements after it run too. The output is the completion value of the code.
  code: async (ctx) => ({ output: await ctx.runCode(ctx.node.instruction), storedItself: true }),
  function: (ctx) => call(ctx, 'function'),
  local_function: (ctx) => call(ctx, 'local_function'),
  global_function: (ctx) => call(ctx, 'global_function'),
  set_prompt: async (ctx) => prompt(ctx, 'prompt', 'set'),
  append_prompt: async (ctx) => prompt(ctx, 'prompt', 'append'),
  set_user_prompt: async (ctx) => prompt(ctx, 'userPrompt', 'set'),
  append_user_prompt: async (ctx) => prompt(ctx, 'userPrompt', 'append'),
  // A branching point only: the previous node's output passes through, so `return` after it still works.
  transition: async (ctx) => ({ output: topFrame(ctx.state).lastOutput }),
};
