/**
 * A turn's reply as it streams: the pieces of the chat node's answer, as the model writes them, with a
 * speaker label the model echoed at its start left out, as the finished reply leaves it out. The first
 * 80 characters are held until the label can be judged, and trailing spaces until more text follows,
 * so what was sent is always the start of the finished reply; `finish` sends the rest of it.
 * Only plain `chat` nodes stream: the other replies (exact text, a required ending) are known whole.
 */
import type { AgentEvent } from '../events.js';
import type { GraphView } from '../graph/view.js';
import { stripSpeakerLabel } from '../engine/reply-text.js';

/** Enough to hold `**Agent name's reply:**` and judge it. */
const HELD = 80;

export class ReplyStream {
  #raw = '';
  #sent = '';

  constructor(
    private readonly graph: GraphView,
    private readonly emit: (delta: string) => void,
  ) {}

  /** Feeds the stream one of the turn's events. */
  see(event: AgentEvent): void {
    // A node entered starts a new answer: what came before was not the reply after all.
    if (event.type === 'node.entered') this.#raw = '';
    if (event.type !== 'model.delta' || event.role !== 'chatbot') return;
    const node = this.graph.get(event.purpose.replace(/^node /, ''));
    if (node?.action !== 'chat') return;
    this.#raw += event.delta;
    if (this.#raw.length < HELD) return;
    const text = stripSpeakerLabel(this.#raw, [this.graph.config.agentName]).trimEnd();
    if (text.startsWith(this.#sent) && text.length > this.#sent.length) {
      this.emit(text.slice(this.#sent.length));
      this.#sent = text;
    }
  }

  /** Sends what `reply` (the finished reply) has beyond what was sent; false when they disagree. */
  finish(reply: string): boolean {
    if (!reply.startsWith(this.#sent)) return false;
    if (reply.length > this.#sent.length) this.emit(reply.slice(this.#sent.length));
    this.#sent = reply;
    return true;
  }
}
