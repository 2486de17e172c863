/**
 * The file store's conversations (files.ts): the `--state FILE` of `chat`, saved after every reply and
 * resumed by a later process. The file is a journal (journal.ts): the whole state first, then what each
 * reply changed (state-delta.ts), so saving a reply costs the same at the 10 000th turn as at the 100th.
 */
import { readFile } from 'node:fs/promises';
import { applyDelta, stateDelta } from './state-delta.js';
import { parseState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import { firstJsonValue, Journal, replayJournal, type JournalFormat } from './journal.js';

/** What every state format's name starts with. */
const STATE_FORMAT_FAMILY = 'meta-agent/state@';

/**
 * The state a state file ends at, whatever its graph; undefined when there is no such file yet (the
 * conversation starts fresh). A file that is not a state is refused with a UserError (exit 2).
 */
export async function loadStateFile(path: string): Promise<ConversationState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw new UserError(`${path}: is a folder, not a state file`, 2);
    throw new UserError(`${path}: cannot read: ${(error as Error).message}`, 2);
  }
  return replay(text, path);
}

/** Whether `text` is a state file's (a journal, or the older single-value format), by its first value. */
export function isStateText(text: string): boolean {
  const format = (firstJsonValue(text) as { format?: unknown } | undefined)?.format;
  return typeof format === 'string' && format.startsWith(STATE_FORMAT_FAMILY);
}

/** The state a journal (or a state file of the older single-value format) ends at. */
export function replay(text: string, path: string): ConversationState {
  return replayJournal(text, {
    first: (json) => parseState(json, path),
    apply: applyDelta,
    last: (state) => parseState(state, path),
    damaged: (line, detail) =>
      new UserError(
        `${path} is not a meta-agent conversation state: line ${line} is damaged (${detail})`,
        2,
        startOver(path),
      ),
  });
}

/**
 * A reply's change is taken from the state saved before it: the states are working copies (see
 * state-delta.ts), so the turns both share are the same objects.
 */
const conversationFormat: JournalFormat<ConversationState, ConversationState> = {
  mark: (state) => state,
  delta: stateDelta,
};

/** Saves the states of one conversation to `path`, one after another (journal.ts). */
export class StateFile {
  readonly #journal: Journal<ConversationState, ConversationState>;

  constructor(readonly path: string) {
    this.#journal = new Journal(path, conversationFormat);
  }

  /** Bytes this object has written, compactions included. */
  get bytesWritten(): number {
    return this.#journal.bytesWritten;
  }

  /** Saves `state`, which came from the state saved last by running replies on a working copy. */
  async save(state: ConversationState): Promise<void> {
    try {
      await this.#journal.save(state);
    } catch (error) {
      throw new UserError(`${this.path}: cannot save the conversation: ${(error as Error).message}`, 1);
    }
  }
}

/** The hint of a state that cannot be used: what the user can do instead. */
export function startOver(path: string): string {
  return `pass another --state file, or delete ${path} to start over`;
}
