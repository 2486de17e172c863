/**
 * A conversation as a front end drives it (the terminal UI, lines in a pipe): one reply at a time, the
 * state saved through the store after each. The interpreter never changes the state it is given, so a
 * reply that fails leaves the last good state both here and in the store.
 */
import { UserError } from '../errors.js';
import { copyAiplState, newAiplState, setValue } from '../aipl/state.js';
import { setEvent } from './aipl.js';
import type { ConversationStore } from './conversation-store.js';
import type { Interpreter, ReplyResult } from './interpreter.js';
import type { ConversationState } from './state.js';

/** Where a conversation is kept: the store, and its key there. */
export interface KeptAt {
  store: ConversationStore;
  key: string;
}

export class Conversation {
  #state: ConversationState | undefined;

  constructor(
    readonly interpreter: Interpreter,
    /** A resumed conversation, or undefined for a new one. */
    state: ConversationState | undefined,
    /** Where to save the state after every reply; nowhere when undefined. */
    readonly keptAt?: KeptAt,
  ) {
    this.#state = state;
  }

  /** The state after the last reply; undefined before the first. */
  get state(): ConversationState | undefined {
    return this.#state;
  }

  /** True until the agent has run at all: its opening turn is still to come. */
  get fresh(): boolean {
    return this.#state?.current === undefined;
  }

  /**
   * Stores `values` (`[ns.key, value]`) in the conversation's AIPL state before its next reply, as code's
   * `aipl.set` does, with `set by the user` as their question, tells each as an update (`aipl.phase`),
   * and saves the state. A UserError when the graph has no AIPL (config.aipl) or a value is refused.
   */
  async setAipl(values: readonly (readonly [string, string])[]): Promise<void> {
    const { graph, events } = this.interpreter;
    if (!graph.config.aipl)
      throw new UserError(
        `the graph "${graph.name}" does not use AIPL, so it has no AIPL state to set`,
        2,
        'turn AIPL on with "aipl": {} in its config',
      );
    const base = this.#state ?? this.interpreter.newState();
    const aipl = copyAiplState(base.aipl ?? newAiplState());
    // Every value is checked before any is told or kept: a refused one changes nothing.
    const entries = values.map(([name, value]) => {
      try {
        return setValue(aipl, name, value, 'set by the user');
      } catch (error) {
        throw new UserError(`--aipl-set ${name}: ${(error as Error).message.replace(/^aipl\.set: /, '')}`, 2);
      }
    });
    const state = { ...base, aipl };
    await this.keptAt?.store.save(this.keptAt.key, state);
    this.#state = state;
    for (const entry of entries) events.emit(setEvent(entry, 'the user'));
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
    await this.keptAt?.store.save(this.keptAt.key, result.state);
    this.#state = result.state;
    return { ...result, lastWords };
  }
}
