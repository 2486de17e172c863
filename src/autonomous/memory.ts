/**
 * Long-term memory as runs, autograms and the `memory` command open it: a namespace under the
 * workspace's `.meta-agent/memory/` (out of reach of the agents' file commands), embedded by the
 * embedder role's model. A namespace name or a namespace's files that cannot be used are user errors.
 */
import { join } from 'node:path';
import { UserError } from '../errors.js';
import type { LanguageModel } from '../llm/types.js';
import { namespaceFolder, namespaceProblem } from '../../memory/namespaces.js';
import { MemoryDamaged, MemoryStore } from '../../memory/store.js';
import { NamespaceBusy } from '../../memory/lock.js';
import { RESERVED_FOLDER } from '../../tools/workspace.js';

export function memoryRoot(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'memory');
}

export interface MemoryLocation {
  /** The workspace folder whose memory it is. */
  workspace: string;
  namespace: string;
  /** The embedder role's model; memory goes by words alone when it cannot embed. */
  embedder?: LanguageModel;
  /** Told once when memory goes by words alone. */
  onNotice?: (message: string) => void;
}

export async function openMemory(location: MemoryLocation): Promise<MemoryStore> {
  const problem = namespaceProblem(location.namespace);
  if (problem) throw new UserError(`--namespace: ${problem}`, 2);
  try {
    return await MemoryStore.open({
      folder: namespaceFolder(memoryRoot(location.workspace), location.namespace),
      ...(location.embedder && { embedder: location.embedder }),
      ...(location.onNotice && { onNotice: location.onNotice }),
    });
  } catch (error) {
    throw memoryUserError(error);
  }
}

/** A store's damaged files or a busy lock as the user should read them; anything else as it is. */
export function memoryUserError(error: unknown): unknown {
  if (error instanceof MemoryDamaged)
    return new UserError(
      `memory: ${error.message}`,
      1,
      'move the namespace folder aside, or use another --namespace',
    );
  if (error instanceof NamespaceBusy)
    return new UserError(`memory: the namespace is busy: ${error.message}`, 1, 'try again when it is done');
  if (error instanceof RangeError) return new UserError(`memory: ${error.message}`, 2);
  return error;
}
