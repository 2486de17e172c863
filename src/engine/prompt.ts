/**
 * Prompt formation as seed 001 (paper Appendix A) describes it and AutoGRAMS 0.1 does it
 * (`make_prompt`, `set_past_input` and `set_input` in autograms/nodes/base_node.py). Pure functions of
 * (graph, node, state): tests call them directly and the interpreter sends what they return.
 *
 * The chatbot sees a list of inputs and outputs built from the chat and thought turns in scope:
 * - a past turn whose instruction is retained (thoughts always; a chat node when no user reply came
 *   immediately before it, or when its conditional text `?{ … }` was shown) has as input its
 *   instruction through the instruction template, with the user reply it consumed, if any;
 * - any other past turn (a chat node that answered a user reply, and every chat_exact) has as input only
 *   the user reply (`User: …`), or nothing: the instruction is dropped to keep prompts short;
 * - the last input is the instruction template filled with the pending user reply (empty when a thought
 *   node already consumed it), the agent name and the current instruction;
 * - the reply start (`Agent's reply:`) ends every input in `suffix` mode, or begins the model's reply (and
 *   every past output) in `prefix` mode;
 * - the frame's prompt (graph config, set_prompt, append_prompt) is prepended to the first input;
 * - a node with a conversationScope sees only past turns of nodes in that category;
 * - past turns beyond the history window (`historyTokens`, counted newest first) are left out, so a
 *   long conversation never overflows the model's context, and forming a prompt costs the same at the
 *   10 000th turn as at the 100th; the classifier's window is smaller (`classifierHistoryTokens`).
 *
 * Mapping to chat messages: input i is a `user` message and output i the `assistant` message after it, so
 * the list alternates user/assistant and ends with a user message. The prompt stays inside the first user
 * message (the seed's rule) rather than becoming a system message; in an AIPL graph (config.aipl) the
 * rendered template is the system message instead, as seed 002 puts it ("rendered prompt templates are
 * used within the live chat context via system-messages"). In `prefix` mode the reply start is given
 * apart, as `prefix`: a model that continues a last assistant message is sent it as one (model-calls.ts).
 */
import type { GraphConfig } from '../graph/schema.js';
import type { CompiledNode } from '../graph/parse.js';
import type { GraphView } from '../graph/view.js';
import { countTokens, DEFAULT_TOKENIZER_MODEL } from '../llm/tokens.js';
import type { ChatMessage } from '../llm/types.js';
import { turnsNewestFirst } from './frames.js';
import type { ConversationState, Turn } from './state.js';
import { topFrame } from './state.js';

/** What a chat or thought node sends to the chatbot. */
export interface ChatPrompt {
  messages: ChatMessage[];
  /** The node's reply start (`Agent's reply:`): in `suffix` mode the last message ends with it. */
  replyStart: string;
  /** In `prefix` mode, the reply start again: what the reply is to begin with. */
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
  return config.replyStartType === 'suffix' ? [text, style.replyStart].filter(Boolean).join('\n') : text;
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

/** A past turn's input: its instruction when retained, else only the user reply it answered. */
function pastInput(config: GraphConfig, style: NodeStyle, turn: Turn): string {
  if (!isRetained(turn)) return withSuffix(config, lastResponse(config, turn.userReply), style);
  return instructionInput(config, style, turn.userReply, turn.instruction);
}

/** States saved before turns recorded `retain` follow the seed's rule for chat and thought turns. */
function isRetained(turn: Turn): boolean {
  return turn.retain ?? (turn.kind === 'thought' || !turn.userReply);
}

function pastOutput(config: GraphConfig, style: NodeStyle, turn: Turn): string {
  return config.replyStartType === 'prefix' ? `${style.replyStart} ${turn.output}` : turn.output;
}

/** Counts the tokens of a text, for the history window. */
export type TokenCounter = (text: string) => number;

/** What a prompt may carry of the past: at most `tokens` tokens of past turns (0: all of them). */
export interface HistoryWindow {
  tokens: number;
  count: TokenCounter;
}

/** Tokens a message costs beyond its text (OpenAI's framing is 3; one more for safety). */
const MESSAGE_FRAMING = 4;

type Pair = { input: string; output: string };

/** Past turns in scope (of one category, when `scope` is given) as (input, output) pairs, oldest first. */
function history(graph: GraphView, state: ConversationState, window: HistoryWindow, scope?: string): Pair[] {
  return newestThatFit(pairsNewestFirst(graph, state, scope), (pair) => [pair.input, pair.output], window);
}

function* pairsNewestFirst(graph: GraphView, state: ConversationState, scope?: string): Generator<Pair> {
  for (const turn of turnsNewestFirst(state)) {
    if (scope && graph.get(turn.node)?.category !== scope) continue;
    const style = styleOf(graph.config, graph.get(turn.node));
    yield { input: pastInput(graph.config, style, turn), output: pastOutput(graph.config, style, turn) };
  }
}

/**
 * The newest of `items` (given newest first) whose texts fit in the window, oldest first; all of them
 * when the window has no limit. A tokenizer's tokens each stand for at least one byte, so while the
 * texts' bytes fit, nothing needs counting (and the tokenizer is not even loaded).
 */
function newestThatFit<T>(
  items: Iterable<T>,
  textsOf: (item: T) => readonly string[],
  window: HistoryWindow,
): T[] {
  const size = (item: T, measure: (text: string) => number) =>
    textsOf(item).reduce((sum, text) => sum + measure(text) + MESSAGE_FRAMING, 0);
  const kept: T[] = [];
  let bytes = 0;
  let tokens = 0;
  let counting = false;
  for (const item of items) {
    if (window.tokens > 0) {
      bytes += size(item, (text) => Buffer.byteLength(text));
      if (!counting && bytes > window.tokens) {
        counting = true;
        tokens = kept.reduce((sum, earlier) => sum + size(earlier, window.count), 0);
      }
      if (counting && (tokens += size(item, window.count)) > window.tokens) break;
    }
    kept.push(item);
  }
  return kept.reverse();
}

/**
 * The graph's history window, counted with `count`, by default in the encoding of current OpenAI
 * models (close enough for a budget where the model's own tokenizer is unknown).
 */
export function historyWindow(
  config: GraphConfig,
  count: TokenCounter = (text) => countTokens(DEFAULT_TOKENIZER_MODEL, text),
): HistoryWindow {
  return { tokens: config.historyTokens, count };
}

/**
 * The classifier's window: `classifierHistoryTokens` within `historyTokens` (0 is no limit for either).
 * A one-token answer needs the recent conversation, not the chatbot's whole window; AutoGRAMS likewise
 * cuts the classifier's input at 2,048 tokens (`classifier_max_input_len`) and the chatbot's at 3,500.
 */
export function classifierWindow(
  config: GraphConfig,
  count: TokenCounter = (text) => countTokens(DEFAULT_TOKENIZER_MODEL, text),
): HistoryWindow {
  const limits = [config.historyTokens, config.classifierHistoryTokens].filter((tokens) => tokens > 0);
  return { tokens: limits.length > 0 ? Math.min(...limits) : 0, count };
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
  window = historyWindow(graph.config),
  /** The frame's prompt as rendered (AIPL); default: as stored. */
  prompt = topFrame(state).prompt,
) {
  const config = graph.config;
  const style = styleOf(config, node);
  const pairs = history(graph, state, window, node.conversationScope);
  const inputs = [
    ...pairs.map((p) => p.input),
    instructionInput(config, style, state.pendingUser, instruction),
  ];
  const asSystem = config.aipl !== undefined;
  if (prompt && !asSystem) inputs[0] = `${prompt}\n\n${inputs[0]}`;

  const messages: ChatMessage[] = prompt && asSystem ? [{ role: 'system', content: prompt }] : [];
  pairs.forEach((pair, i) => {
    messages.push({ role: 'user', content: inputs[i]! }, { role: 'assistant', content: pair.output });
  });
  messages.push({ role: 'user', content: inputs[inputs.length - 1]! });
  return {
    messages,
    replyStart: style.replyStart,
    ...(config.replyStartType === 'prefix' && { prefix: style.replyStart }),
  } satisfies ChatPrompt;
}

/**
 * The conversation as the classifier sees it (Appendix B): the turns in scope and the pending user reply,
 * oldest first, as one block of text. `context` keeps only the last `context` exchanges (an exchange is
 * an output and the input after it), as the node's `transitionContext` asks; undefined keeps all that
 * fit in the classifier's window (classifierWindow).
 */
export function classifierHistory(
  graph: GraphView,
  state: ConversationState,
  context?: number,
  window = classifierWindow(graph.config),
): string {
  const config = graph.config;
  const parts = history(graph, state, window).flatMap((p) => [p.input, p.output]);
  parts.push(lastResponse(config, state.pendingUser));
  const kept = context === undefined ? parts : parts.slice(Math.max(0, parts.length - 2 * context));
  return kept.filter((p) => p.length > 0).join('\n\n');
}

/**
 * The classifier's prompt before its choices: the opening (the question prompt, with any interjection
 * examples before it), the conversation and the question, in one user turn (Appendix B). `classify` adds
 * the lettered choices (or the Yes/No request) after it.
 */
export function classifierPrompt(opening: string, history: string, question: string): string {
  return [opening, history, question].filter((part) => part.length > 0).join('\n\n');
}

/**
 * The conversation as user and assistant messages, oldest first: the user's replies and the agent's chat
 * replies in scope, and the pending user reply; no prompt, no instructions and no thoughts (what AIPL's
 * update questions are answered from, seed 002). Only the newest that fit in the window are kept.
 */
export function conversationMessages(state: ConversationState, window: HistoryWindow): ChatMessage[] {
  const past = newestThatFit(
    exchangesNewestFirst(state),
    (messages) => messages.map((m) => m.content),
    window,
  );
  const pending: ChatMessage[] = state.pendingUser ? [{ role: 'user', content: state.pendingUser }] : [];
  return [...past.flat(), ...pending];
}

/** Each turn's user reply and chat output as messages, oldest first within a turn, turns newest first. */
function* exchangesNewestFirst(state: ConversationState): Generator<ChatMessage[]> {
  for (const turn of turnsNewestFirst(state)) {
    const messages: ChatMessage[] = [];
    if (turn.userReply) messages.push({ role: 'user', content: turn.userReply });
    if (turn.kind === 'chat') messages.push({ role: 'assistant', content: turn.output });
    yield messages;
  }
}

/** One exchange of a conversation as the user saw it: what the agent said, and the user's answer if any. */
export interface Exchange {
  agent: string;
  user?: string;
}

/**
 * The userbot's prompt (Appendix D): the conversation from the user's side, so the agent's replies are
 * the inputs and the user's replies the outputs. The user prompt is prepended to the first input, and the
 * last input asks for a reply following `instruction` (AutoGRAMS' USER_INSTRUCTION_TEMPLATE,
 * autograms/autogram_config.py, which says "user" whatever the user's name), ending in the user's reply
 * start.
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
      ? `${exchange.agent}\n\nInstruction for user: ${instruction}\n${config.userName}'s reply:`
      : exchange.agent;
    messages.push({ role: 'user', content });
    if (!last && exchange.user !== undefined) messages.push({ role: 'assistant', content: exchange.user });
  });
  if (userPrompt && messages[0])
    messages[0] = { role: 'user', content: `${userPrompt}\n\n${messages[0].content}` };
  return messages;
}
