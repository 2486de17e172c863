/**
 * The file store's goal runs (files.ts): a run file is a journal (journal.ts) of the run's states, the
 * whole run first, then one line for each save of a step's phase: everything but the history entries
 * saved before it (a run's history only grows, and an entry is never changed once recorded), so a
 * save costs the same at the 1 000th step as at the 10th. A run file of the older single-value format
 * (`meta-agent/run@1` as one JSON document) still loads, and is compacted into a journal when resumed.
 */
import { readFile } from 'node:fs/promises';
import { InvalidFileError, UserError } from '../errors.js';
import { parseJsonText } from '../graph/load.js';
import { loadedRunState, type HistoryEntry, type RunState } from '../autonomous/run-state.js';
import { Journal, replayJournal, type JournalFormat } from './journal.js';

/** What a run journal remembers of the run it saved last: how long its history was, and its last entry. */
interface SavedHistory {
  length: number;
  last: HistoryEntry | undefined;
}

/**
 * The run is one value the goal loop changes in place: a history that still holds the entry saved
 * last where it was is a continuation, and only its new entries are written; any other is written whole.
 */
const runFormat: JournalFormat<RunState, SavedHistory> = {
  mark: ({ history }) => ({ length: history.length, last: history.at(-1) }),
  delta: (saved, state) => {
    const { history } = state;
    const keep = saved.length > 0 && history[saved.length - 1] === saved.last ? saved.length : 0;
    return { ...state, keep, history: history.slice(keep) };
  },
};

/** Saves the states of one run to `path`, one after another. */
export class RunJournal {
  readonly #journal: Journal<RunState, SavedHistory>;

  constructor(readonly path: string) {
    this.#journal = new Journal(path, runFormat);
  }

  /** Bytes this object has written, compactions included. */
  get bytesWritten(): number {
    return this.#journal.bytesWritten;
  }

  async save(state: RunState): Promise<void> {
    try {
      await this.#journal.save(state);
    } catch (error) {
      throw new UserError(`cannot save the run to ${this.path}: ${(error as Error).message}`, 1);
    }
  }
}

/** Reads a run file; anything that is not one is refused with the first wrong field (exit 2). */
export async function loadRunFile(path: string): Promise<RunState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder' : (error as Error).message;
    throw new UserError(
      `cannot read the run ${path}: ${reason}`,
      2,
      'pass the file `meta-agent run` named when the run started (WORKSPACE/.meta-agent/runs/NAME-ID.run.json)',
    );
  }
  return replayRun(text, path);
}

/** The run a run file's text ends at. */
export function replayRun(text: string, path: string): RunState {
  return replayJournal(text, {
    first: (json) => loadedRunState(json, path),
    apply: applyRunDelta,
    last: (state) => loadedRunState(state, path),
    // A first line that is not JSON is a file that is not JSON: say where, as for any JSON file.
    damaged: (line, detail) =>
      line === 1
        ? jsonError(text, path)
        : new InvalidFileError(`${path} is not a usable run file: line ${line} is damaged (${detail})`),
  });
}

/** `state` with a line's change made, its history extended in place (replaying costs what the lines hold). */
function applyRunDelta(state: RunState, json: unknown): RunState {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error('not an object');
  const { keep, history, ...rest } = json as Record<string, unknown>;
  if (!Number.isInteger(keep) || (keep as number) < 0 || (keep as number) > state.history.length)
    throw new Error(`keep: not a count of the ${state.history.length} entries before`);
  if (!Array.isArray(history)) throw new Error('history: not a list');
  const kept = state.history;
  kept.length = keep as number;
  for (const entry of history) kept.push(entry as HistoryEntry);
  // The whole is checked once the lines are read (JournalReader.last).
  return { ...(rest as Omit<RunState, 'history'>), history: kept };
}

function jsonError(text: string, path: string): Error {
  try {
    parseJsonText(text, path);
  } catch (error) {
    return error as Error;
  }
  return new InvalidFileError(`${path}: invalid JSON`);
}
