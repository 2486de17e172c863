/**
 * A conversation as `meta-agent chat` drives it, whatever the front end (terminal UI or lines): one
 * reply at a time, the state saved after each. The interpreter never changes the state it is given, so a
 * reply that fails leaves the last good state both here and on disk.
 */
import type { Interpreter, ReplyResult } from '../engine/interpreter.js';
import type { ConversationState } from '../engine/state.js';
import { StateFile } from './state-file.js';

export class ChatSession {
  #state: ConversationState | undefined;
  readonly #file: StateFile | undefined;

  constructor(
    readonly interpreter: Interpreter,
    /** A resumed conversation, or undefined for a new one. */
    state: ConversationState | undefined,
    /** Where to save the state after every reply; nowhere when undefined. */
    readonly statePath?: string,
  ) {
    this.#state = state;
    this.#file = statePath === undefined ? undefined : new StateFile(statePath);
  }

  /** True until the agent has run at all: its opening turn is still to come. */
  get fresh(): boolean {
    return this.#state?.current === undefined;
  }

  /**
   * Gives the agent the user's reply (nothing for its opening turn), saves the new state, and returns
   * what the agent said. `ended` is true once a quit transition was taken; `lastWords` when the agent's
   * reply ended the conversation (its node could only quit, so the quit is taken at once).
   */
  async reply(text: string | undefined): Promise<ReplyResult & { lastWords: boolean }> {
    let result = await this.interpreter.reply(text, this.#state);
    const lastWords = !result.ended && this.interpreter.saidLastWords(result.state);
    if (lastWords)
      result = { ...(await this.interpreter.reply(undefined, result.state)), reply: result.reply };
    await this.#file?.save(result.state);
    this.#state = result.state;
    return { ...result, lastWords };
  }
}
