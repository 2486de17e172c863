/**
 * The chat without a terminal UI, for pipes and scripts: each input line is one user reply, each agent
 * reply one output line with no prefix, or (`--json`) the event stream as JSON lines.
 */
import { createInterface } from 'node:readline';
import { eventJson, type EventBus } from '../events.js';
import type { Conversation } from '../engine/conversation.js';

/**
 * Runs the conversation over `input` until a quit transition (or the agent's last words) or the end of
 * the input. The agent's
 * opening turn, when it has not run yet, comes before the first line is read, so the agent may speak
 * first. Blank lines are skipped: they are a stray Enter, not a reply. `say` gets every agent reply.
 */
export async function chatInLines(
  session: Conversation,
  input: NodeJS.ReadableStream,
  say: (reply: string) => void,
): Promise<void> {
  if (session.fresh) {
    const opening = await session.reply(undefined);
    if (!opening.ended || opening.lastWords) say(opening.reply);
    if (opening.ended) return;
  }
  const lines = createInterface({ input, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const result = await session.reply(line);
      if (!result.ended || result.lastWords) say(result.reply);
      if (result.ended) return;
    }
  } finally {
    lines.close();
  }
}

/** Writes every event on `bus` as one JSON line; returns a function that stops. */
export function printEvents(bus: EventBus, write: (line: string) => void): () => void {
  return bus.on((event) => write(`${eventJson(event)}\n`));
}
