/**
 * The file store's conversations (files.ts): the `--state FILE` of `chat`, saved after every reply and
 * resumed by a later process.
 *
 * The file is a journal, one JSON value a line: the whole state first, then what each reply changed
 * (state-delta.ts), appended and flushed to the disk before the reply is shown, so saving a reply costs
 * the same at the 10 000th turn as at the 100th. A process killed while appending leaves at most a torn
 * last line, which reading skips: that reply was never shown as saved. Whenever the appended lines
 * outgrow the state they follow, and on the first save of a process (which may resume a file with a
 * torn end, or one in the older single-value format), the journal is compacted: the whole state is
 * written to a temporary file in the same folder, flushed, and renamed over the journal, so a crash
 * leaves the old journal or the new one, never a mix. The journal keeps its permissions (a `chmod 600`
 * state stays private) and a symlink to it stays a link; see ../write-file.ts.
 */
import { open, readFile } from 'node:fs/promises';
import { applyDelta, stateDelta } from './state-delta.js';
import { parseState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import { withoutBom } from '../graph/json-syntax.js';
import { writeTextFile } from '../write-file.js';

/** What every state format's name starts with. */
const STATE_FORMAT_FAMILY = 'meta-agent/state@';

/** Appended lines are never compacted below this size: a short conversation is not rewritten every reply. */
const MIN_COMPACTION_BYTES = 64 * 1024;

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
  text = withoutBom(text);
  const first = parseJson(text) ?? parseJson(text.slice(0, text.indexOf('\n')));
  const format = (first as { format?: unknown } | undefined)?.format;
  return typeof format === 'string' && format.startsWith(STATE_FORMAT_FAMILY);
}

/** The state a journal (or a state file of the older single-value format) ends at. */
export function replay(text: string, path: string): ConversationState {
  text = withoutBom(text);
  const whole = parseJson(text);
  if (whole !== undefined) return parseState(whole, path);
  const lines = text.split('\n');
  const torn = !text.endsWith('\n');
  let state = parseState(lineValue(lines[0]!, path, 1), path);
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const json = parseJson(line);
    if (json === undefined && torn && i === lines.length - 1) break;
    try {
      state = applyDelta(state, lineValue(line, path, i + 1, json));
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw damaged(path, i + 1, (error as Error).message);
    }
  }
  // A check of the whole, as a single-value file gets: deltas are checked one by one, not together.
  return parseState(state, path);
}

function lineValue(line: string, path: string, number: number, json = parseJson(line)): unknown {
  if (json === undefined) throw damaged(path, number, 'not JSON');
  return json;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function damaged(path: string, line: number, detail: string): UserError {
  return new UserError(
    `${path} is not a meta-agent conversation state: line ${line} is damaged (${detail})`,
    2,
    startOver(path),
  );
}

/** Saves the states of one conversation to `path`, one after another (see the top of this file). */
export class StateFile {
  /** The state the file ends at, once this process has written it. */
  #saved: ConversationState | undefined;
  #compactedBytes = 0;
  #appendedBytes = 0;
  #written = 0;

  constructor(readonly path: string) {}

  /** Bytes this object has written, compactions included. */
  get bytesWritten(): number {
    return this.#written;
  }

  /** Saves `state`, which came from the state saved last by running replies on a working copy. */
  async save(state: ConversationState): Promise<void> {
    try {
      if (
        this.#saved === undefined ||
        this.#appendedBytes > Math.max(this.#compactedBytes, MIN_COMPACTION_BYTES)
      )
        await this.#compact(state);
      else await this.#append(`${JSON.stringify(stateDelta(this.#saved, state))}\n`);
    } catch (error) {
      throw new UserError(`${this.path}: cannot save the conversation: ${(error as Error).message}`, 1);
    }
    this.#saved = state;
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
  async #compact(state: ConversationState): Promise<void> {
    const text = `${JSON.stringify(state)}\n`;
    await writeTextFile(this.path, text, { durable: true });
    this.#compactedBytes = Buffer.byteLength(text);
    this.#appendedBytes = 0;
    this.#written += this.#compactedBytes;
  }
}

/** The hint of a state that cannot be used: what the user can do instead. */
export function startOver(path: string): string {
  return `pass another --state file, or delete ${path} to start over`;
}
