/**
 * The engine for a program that embeds it (the benches do): an interpreter, its state, and a
 * conversation saved through a store after every reply. The product's own layers import the module
 * they need directly; a whole agent, with the goal loop, flows and memory lent, is opened by
 * src/agent/open.ts.
 *
 * ```ts
 * const agent = await Interpreter.create({ graph, models, events });
 * let { reply, state } = await agent.reply(undefined);        // the agent may speak first
 * ({ reply, state } = await agent.reply('hello', state));     // save `saveState(state)` after any reply
 * const { value } = await agent.applyFn('fibonacci', [10]);   // call a callable node directly
 * agent.dispose();
 * ```
 */
export {
  Interpreter,
  NodeError,
  type InterpreterLimits,
  type InterpreterOptions,
  type ReplyResult,
  type ApplyResult,
} from './interpreter.js';
export {
  STATE_FORMAT,
  newState,
  saveState,
  loadState,
  parseState,
  type ConversationState,
  type Frame,
  type Turn,
  type ScopeKind,
} from './state.js';
export { Conversation, type KeptAt } from './conversation.js';
export type { ConversationStore } from './conversation-store.js';
export type { AgentOpener, AgentSpec } from './agent-opener.js';
export { variablesInScope, turnsInScope, turnsNewestFirst } from './frames.js';
export {
  chatPrompt,
  classifierHistory,
  classifierPrompt,
  historyWindow,
  userbotPrompt,
  type ChatPrompt,
  type HistoryWindow,
} from './prompt.js';
export {
  simulateConversation,
  simulateConversations,
  seededRandom,
  type Random,
  type SimulationOptions,
  type SimulatedConversation,
  type SimulatedTurn,
  type SimulationReport,
} from './simulate.js';
export { attachTrace } from './trace.js';
export { SelfMode, conversationGraph, type SelfModeOptions } from './self-mode.js';
export { isValidNodeName, type SelfCaller } from './self-api.js';
