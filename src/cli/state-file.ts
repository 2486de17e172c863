/**
 * The `--state FILE` of `chat`: a conversation saved after every reply and resumed by a later process.
 * Saving is atomic and durable (temporary file in the same folder, fsync, rename, fsync of the folder),
 * so a process killed at any moment leaves the old state or the new one, never a torn file.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { loadState, saveState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import type { GraphFile } from '../graph/schema.js';
import type { GraphView } from '../graph/view.js';

/**
 * Reads the state saved in `path` for a conversation on the graph `file`; undefined when there is no
 * such file yet (the conversation starts fresh). A file that is not a state, or belongs to another
 * graph, is refused with a UserError (exit 2) saying what to do.
 */
export async function readStateFile(path: string, file: GraphFile): Promise<ConversationState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw new UserError(`${path}: is a folder, not a state file`, 2);
    throw new UserError(`${path}: cannot read: ${(error as Error).message}`, 2);
  }
  const state = loadState(text, path);
  if (state.graphName !== file.name)
    throw new UserError(
      `${path} holds a conversation with the graph "${state.graphName}", not "${file.name}"`,
      2,
      startOver(path),
    );
  return state;
}

/**
 * Refuses a state standing at nodes `graph` does not have: the file was edited since the state was
 * saved. (A self-edited graph is restored from the state itself, so the agent's own nodes are there.)
 */
export function checkStateNodes(state: ConversationState, graph: GraphView, path: string): void {
  const needed = [
    ...(state.current === undefined ? [] : [state.current]),
    ...state.stack.flatMap((frame) => (frame.caller === undefined ? [] : [frame.caller])),
  ];
  const missing = needed.find((name) => !graph.get(name));
  if (missing !== undefined)
    throw new UserError(
      `${path} stands at node "${missing}", which the graph "${graph.name}" does not have (was the graph edited since?)`,
      2,
      startOver(path),
    );
}

/** Writes `state` to `path` atomically and durably; the previous file stays whole until the rename. */
export async function writeStateFile(path: string, state: ConversationState): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(saveState(state));
      // Without fsync the rename can reach the disk before the data, and a crash would leave an empty file.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new UserError(`${path}: cannot save the conversation: ${(error as Error).message}`, 1);
  }
  await syncFolder(dirname(path));
}

/** Makes the rename itself durable. Some platforms cannot open a folder for syncing; that only costs durability. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort by design: the state is already whole on disk, only the rename's durability is at stake.
  }
}

function startOver(path: string): string {
  return `pass another --state file, or delete ${path} to start over`;
}
