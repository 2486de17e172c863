/**
 * The file store's journals: a state saved after every step of something that grows (a conversation's
 * replies, a goal run's steps), so that a save costs the same at the 10 000th step as at the 100th.
 *
 * The file is one JSON value a line: the whole state first, then what each save changed (the format
 * says how), appended and flushed to the disk before the save returns. A process killed while
 * appending leaves at most a torn last line, which reading skips: that save never returned. Whenever
 * the appended lines outgrow the state they follow, and on the first save of a process (which may
 * resume a file with a torn end, or one in an older single-value format), the journal is compacted:
 * the whole state is written to a temporary file in the same folder, flushed, and renamed over the
 * journal, so a crash leaves the old journal or the new one, never a mix. The journal keeps its
 * permissions (a `chmod 600` state stays private) and a symlink to it stays a link; see ../write-file.ts.
 */
import { open } from 'node:fs/promises';
import { withoutBom } from '../graph/json-syntax.js';
import { writeTextFile } from '../write-file.js';

/** Appended lines are never compacted below this size: a short journal is not rewritten every save. */
const MIN_COMPACTION_BYTES = 64 * 1024;

/** How a journal writes the states of one kind: what it remembers of a saved state, and the change since. */
export interface JournalFormat<State, Mark> {
  /** What the journal keeps of a state it has written, to write the next one as a change from it. */
  mark(state: State): Mark;
  /** The line that takes a reader from the state marked `saved` to `state`. */
  delta(saved: Mark, state: State): unknown;
}

/** Saves the states of one thing to `path`, one after another (see the top of this file). */
export class Journal<State, Mark> {
  #saved: Mark | undefined;
  #compactedBytes = 0;
  #appendedBytes = 0;
  #written = 0;

  constructor(
    readonly path: string,
    readonly format: JournalFormat<State, Mark>,
  ) {}

  /** Bytes this object has written, compactions included. */
  get bytesWritten(): number {
    return this.#written;
  }

  /** Saves `state`; an error is the file system's, for the caller to say what it was saving. */
  async save(state: State): Promise<void> {
    if (
      this.#saved === undefined ||
      this.#appendedBytes > Math.max(this.#compactedBytes, MIN_COMPACTION_BYTES)
    )
      await this.#compact(state);
    else await this.#append(`${JSON.stringify(this.format.delta(this.#saved, state))}\n`);
    this.#saved = this.format.mark(state);
  }

  async #append(line: string): Promise<void> {
    const handle = await open(this.path, 'a');
    try {
      await handle.write(line);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    const bytes = Buffer.byteLength(line);
    this.#appendedBytes += bytes;
    this.#written += bytes;
  }

  /** Replaces the journal with one line, the whole state, atomically and durably. */
  async #compact(state: State): Promise<void> {
    const text = `${JSON.stringify(state)}\n`;
    await writeTextFile(this.path, text, { durable: true });
    this.#compactedBytes = Buffer.byteLength(text);
    this.#appendedBytes = 0;
    this.#written += this.#compactedBytes;
  }
}

/** How a journal of one kind is read back. */
export interface JournalReader<State> {
  /** The state of the first line, or of a whole file in the older single-value format. */
  first(json: unknown): State;
  /** `state` with a line's change made; throws a plain Error saying what is wrong with the line. */
  apply(state: State, json: unknown): State;
  /** The state the lines end at, checked as a whole (changes are checked one by one, not together). */
  last(state: State): State;
  /** The error of a line that cannot be used (numbered from 1). */
  damaged(line: number, detail: string): Error;
}

/** The state a journal's text (or a file of the older single-value format) ends at. */
export function replayJournal<State>(text: string, reader: JournalReader<State>): State {
  text = withoutBom(text);
  const whole = parseJson(text);
  if (whole !== undefined) return reader.first(whole);
  const lines = text.split('\n');
  const torn = !text.endsWith('\n');
  const head = parseJson(lines[0]!);
  if (head === undefined) throw reader.damaged(1, 'not JSON');
  let state = reader.first(head);
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const json = parseJson(line);
    if (json === undefined) {
      if (torn && i === lines.length - 1) break;
      throw reader.damaged(i + 1, 'not JSON');
    }
    try {
      state = reader.apply(state, json);
    } catch (error) {
      throw reader.damaged(i + 1, (error as Error).message);
    }
  }
  return reader.last(state);
}

/** The first JSON value of `text`'s lines, or of the whole text, or undefined when it is not JSON. */
export function firstJsonValue(text: string): unknown {
  text = withoutBom(text);
  return parseJson(text) ?? parseJson(text.slice(0, text.indexOf('\n')));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
