/**
 * The engine's public surface: what the CLI, the designer and the self-referential mode build on.
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
