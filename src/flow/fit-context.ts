/**
 * A flow node's messages fitted to its model's context before the call, as AgentKit trims a composed
 * history to fit (seed 003). The rule: system messages and the last message (the node's prompt) are
 * kept whole; the messages between them (dependencies' turns, history, knowledge) give way oldest
 * first, each dropped whole, or cut (its head and tail kept around a marker, memory/short-term.ts
 * cutToTokens) where cutting it is enough, until the messages and the room for the answer fit. When
 * the kept messages alone leave no room for the answer, no call is made: the node fails, saying so.
 * Tokens are counted as the goal loop counts them (llm/tokens.ts). Pure.
 */
import { cutToTokens, MIN_CUT_TOKENS } from '../../memory/short-term.js';
import { answerRoom } from '../autonomous/budget.js';
import { countMessageTokens, countTokens } from '../llm/tokens.js';
import type { ChatMessage } from '../llm/types.js';

/** What the node's messages must fit. */
export interface ContextLimit {
  /** The model's context window, in tokens: the prompt and the answer share it. */
  contextTokens: number;
  /** Tokens kept for the answer; default the goal loop's room (autonomous/budget.ts answerRoom). */
  answerTokens?: number;
  /** For counting tokens. */
  modelName: string;
}

/** How the messages were made to fit; `dropped` and `cut` are 0 when they fitted as they were. */
export interface Trim {
  /** Messages left out whole. */
  dropped: number;
  /** Messages shortened. */
  cut: number;
  /** Prompt tokens before and after. */
  from: number;
  to: number;
}

export type Fitted = { ok: true; messages: ChatMessage[]; trim: Trim } | { ok: false; error: string };

/** `messages` of the node `node` within `limit` by the rule above, or why they cannot be. */
export function fitToContext(node: string, messages: readonly ChatMessage[], limit: ContextLimit): Fitted {
  const { contextTokens, modelName } = limit;
  const answer = limit.answerTokens ?? answerRoom(contextTokens);
  const room = contextTokens - answer;
  const count = (list: readonly ChatMessage[]) => countMessageTokens(modelName, list);
  const from = count(messages);
  if (from <= room)
    return { ok: true, messages: [...messages], trim: { dropped: 0, cut: 0, from, to: from } };
  const last = messages.length - 1;
  const kept = messages.filter((message, index) => index === last || message.role === 'system');
  const least = count(kept);
  if (least > room)
    return {
      ok: false,
      error: `node "${node}": its system messages and prompt take ${least} tokens, and its answer needs ${answer} more, past the model's ${contextTokens}-token context; shorten them, or give a larger context (--context-tokens, config.contextTokens)`,
    };
  const fitted = [...messages];
  let dropped = 0;
  let cut = 0;
  for (let index = 0; index < fitted.length;) {
    const over = count(fitted) - room;
    if (over <= 0) break;
    const message = fitted[index]!;
    if (index === fitted.length - 1 || message.role === 'system') {
      index += 1;
      continue;
    }
    const left = countTokens(modelName, message.content) - over;
    if (left >= MIN_CUT_TOKENS) {
      fitted[index] = {
        ...message,
        content: cutToTokens(message.content, left, (text) => countTokens(modelName, text)),
      };
      cut += 1;
      index += 1;
    } else {
      fitted.splice(index, 1);
      dropped += 1;
    }
  }
  return { ok: true, messages: fitted, trim: { dropped, cut, from, to: count(fitted) } };
}
