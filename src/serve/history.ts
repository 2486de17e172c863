/**
 * Recognising a conversation from the history a plain OpenAI client sends back. After every turn the
 * server records a digest of the messages its client has seen; a request without `X-Conversation-Id`
 * whose history (up to its last assistant message) has the same digest continues that conversation.
 * The digest chains message by message, so the server extends it with each turn without the client's
 * earlier requests. System messages are the client's own framing and are left out, and a run of user
 * messages counts as one, joined as the graph receives it.
 */
import { createHash } from 'node:crypto';

export interface Said {
  role: 'user' | 'assistant';
  content: string;
}

/** The digest of no messages yet: where `owner`'s conversations with `graph` begin. */
export function historyStart(owner: string, graph: string): string {
  return digest(`${owner}\0${graph}`);
}

/** The digest of `history` after `messages`. */
export function extendHistory(history: string, messages: readonly Said[]): string {
  return messages.reduce((at, { role, content }) => digest(`${at}\0${role}\0${content}`), history);
}

/** Consecutive user messages as one, joined with a blank line. */
export function mergeUserRuns(messages: readonly Said[]): Said[] {
  const merged: Said[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last?.role === 'user' && message.role === 'user')
      merged[merged.length - 1] = { role: 'user', content: `${last.content}\n\n${message.content}` };
    else merged.push({ ...message });
  }
  return merged;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
