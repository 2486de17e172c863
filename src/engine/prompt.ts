/**
 * Prompt formation, exactly as seed 001 (paper Appendix A) describes it. Pure functions of (graph, node,
 * state): tests call them directly and the interpreter sends what they return.
 *
 * The chatbot sees a list of inputs and outputs built from the chat and thought turns in scope:
 * - a past thought turn's input is its instruction, with the user reply it consumed when there was one
 *   (both through the instruction template);
 * - a past chat turn's input is only the user reply it answered (`User: …`), or its instruction when no
 *   user reply came immediately before it;
 * - the last input is the instruction template filled with the pending user reply (empty when a thought
 *   node already consumed it), the agent name and the current instruction;
 * - the reply start (`Agent's reply:`) ends every input in `suffix` mode, or begins the model's reply (and
 *   every past output) in `prefix` mode;
 * - the frame's prompt (graph config, set_prompt, append_prompt) is prepended to the first input.
 *
 * Mapping to chat messages: input i is a `user` message and output i the `assistant` message after it, so
 * the list alternates user/assistant and ends with a user message. The prompt stays inside the first user
 * message (the seed's rule) rather than becoming a system message. In `prefix` mode a final `assistant`
 * message carries the reply start, for servers that continue a trailing assistant message.
 */
import type { GraphConfig } from '../graph/schema.js';
import type { CompiledNode } from '../graph/parse.js';
import type { GraphView } from '../graph/view.js';
import type { ChatMessage } from '../llm/types.js';
import { turnsInScope } from './memory.js';
import type { ConversationState, Turn } from './state.js';
import { topFrame } from './state.js';

/** What the classifier is told first (the AutoGRAMS default question prompt). */
export const QUESTION_PROMPT = 'I need you to solve a multiple choice question.';

/** What a chat or thought node sends to the chatbot. */
export interface ChatPrompt {
  messages: ChatMessage[];
  /** In `prefix` mode, the reply start the model's reply begins with (it is the last, assistant, message). */
  prefix?: string;
}

/** The per-node settings prompt formation uses, with the graph's defaults filled in. */
interface NodeStyle {
  template: string;
  replyStart: string;
}

function styleOf(
  config: GraphConfig,
  node: Pick<CompiledNode, 'instructionTemplate' | 'replyStart'> | undefined,
) {
  return {
    template: node?.instructionTemplate ?? config.instructionTemplate,
    replyStart: (node?.replyStart ?? config.replyStart).replaceAll('<agent_name>', config.agentName),
  } satisfies NodeStyle;
}

/** `User: text`, or '' when there is no user reply. */
function lastResponse(config: GraphConfig, userReply: string): string {
  return userReply ? `${config.userName}: ${userReply}` : '';
}

/**
 * Fills the instruction template. When there is no last response the template's leading blank lines
 * would open the message with nothing, so they are dropped.
 */
export function fillInstructionTemplate(
  template: string,
  parts: { lastResponse: string; agentName: string; instruction: string },
): string {
  const text = template
    .replaceAll('<last_response>', parts.lastResponse)
    .replaceAll('<agent_name>', parts.agentName)
    .replaceAll('<instruction>', parts.instruction);
  return parts.lastResponse ? text : text.replace(/^\s+/, '');
}

function withSuffix(config: GraphConfig, text: string, style: NodeStyle): string {
  return config.replyStartType === 'suffix' ? `${text}\n${style.replyStart}` : text;
}

function instructionInput(
  config: GraphConfig,
  style: NodeStyle,
  userReply: string,
  instruction: string,
): string {
  const filled = fillInstructionTemplate(style.template, {
    lastResponse: lastResponse(config, userReply),
    agentName: config.agentName,
    instruction,
  });
  return withSuffix(config, filled, style);
}

/** A past turn's input, per the seed's thought/chat rules. */
function pastInput(config: GraphConfig, style: NodeStyle, turn: Turn): string {
  if (turn.kind === 'chat' && turn.userReply)
    return withSuffix(config, lastResponse(config, turn.userReply), style);
  return instructionInput(config, style, turn.userReply, turn.instruction);
}

function pastOutput(config: GraphConfig, style: NodeStyle, turn: Turn): string {
  return config.replyStartType === 'prefix' ? `${style.replyStart} ${turn.output}` : turn.output;
}

/** Past turns in scope as (input, output) pairs. */
function history(graph: GraphView, state: ConversationState): { input: string; output: string }[] {
  return turnsInScope(state).map((turn) => {
    const style = styleOf(graph.config, graph.get(turn.node));
    return { input: pastInput(graph.config, style, turn), output: pastOutput(graph.config, style, turn) };
  });
}

/**
 * The chatbot prompt for `node`, whose instruction (with `$var`s embedded) is `instruction`, answering the
 * pending user reply in `state`.
 */
export function chatPrompt(
  graph: GraphView,
  node: CompiledNode,
  state: ConversationState,
  instruction: string,
) {
  const config = graph.config;
  const style = styleOf(config, node);
  const pairs = history(graph, state);
  const inputs = [
    ...pairs.map((p) => p.input),
    instructionInput(config, style, state.pendingUser, instruction),
  ];
  const prompt = topFrame(state).prompt;
  if (prompt) inputs[0] = `${prompt}\n\n${inputs[0]}`;

  const messages: ChatMessage[] = [];
  pairs.forEach((pair, i) => {
    messages.push({ role: 'user', content: inputs[i]! }, { role: 'assistant', content: pair.output });
  });
  messages.push({ role: 'user', content: inputs[inputs.length - 1]! });
  if (config.replyStartType === 'suffix') return { messages } satisfies ChatPrompt;
  messages.push({ role: 'assistant', content: style.replyStart });
  return { messages, prefix: style.replyStart } satisfies ChatPrompt;
}

/**
 * The conversation as the classifier sees it (Appendix B): the turns in scope and the pending user reply,
 * oldest first, as one block of text. `context` keeps only the last `context` exchanges (an exchange is
 * an output and the input after it), as the node's `transitionContext` asks; undefined keeps all.
 */
export function classifierHistory(graph: GraphView, state: ConversationState, context?: number): string {
  const config = graph.config;
  const parts = history(graph, state).flatMap((p) => [p.input, p.output]);
  parts.push(lastResponse(config, state.pendingUser));
  const kept = context === undefined ? parts : parts.slice(Math.max(0, parts.length - 2 * context));
  return kept.filter((p) => p.length > 0).join('\n\n');
}

/**
 * The classifier's prompt before its choices: the question prompt, the conversation and the question, in
 * one user turn (Appendix B). `classify` adds the lettered choices (or the Yes/No request) after it.
 */
export function classifierPrompt(history: string, question: string): string {
  return [QUESTION_PROMPT, history, question].filter((part) => part.length > 0).join('\n\n');
}

/** One exchange of a conversation as the user saw it: what the agent said, and the user's answer if any. */
export interface Exchange {
  agent: string;
  user?: string;
}

/**
 * The userbot's prompt (Appendix D): the conversation from the user's side, so the agent's replies are
 * the inputs and the user's replies the outputs. The user prompt is prepended to the first input, and the
 * last input asks for a reply following `instruction` (AutoGRAMS' user instruction template), ending in
 * the user's reply start.
 */
export function userbotPrompt(
  config: GraphConfig,
  userPrompt: string,
  exchanges: readonly Exchange[],
  instruction: string,
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  exchanges.forEach((exchange, i) => {
    const last = i === exchanges.length - 1;
    const content = last
      ? `${exchange.agent}\n\nInstruction for ${config.userName}: ${instruction}\n${config.userName}'s reply:`
      : exchange.agent;
    messages.push({ role: 'user', content });
    if (!last && exchange.user !== undefined) messages.push({ role: 'assistant', content: exchange.user });
  });
  if (userPrompt && messages[0])
    messages[0] = { role: 'user', content: `${userPrompt}\n\n${messages[0].content}` };
  return messages;
}
