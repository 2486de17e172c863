/** A conversation's messages as a client sees them, from the state the graph keeps. */
import type { ConversationState } from '../engine/state.js';
import type { Said } from './history.js';

/**
 * The user replies and the agent's chat replies of `state`, oldest first. The state keeps the turns its
 * prompts need: a function's turns are gone once it has returned, unless it was a global function.
 */
export function messagesOf(state: ConversationState | undefined): Said[] {
  const messages: Said[] = [];
  for (const turn of state?.stack.flatMap((frame) => frame.turns) ?? []) {
    if (turn.userReply) messages.push({ role: 'user', content: turn.userReply });
    if (turn.kind === 'chat') messages.push({ role: 'assistant', content: turn.output });
  }
  return messages;
}
